/** `withHeavyUser` (sim/heavy-user.ts) on plain traces: the heaviest user made to submit a given part of the work. */
import { describe, expect, test } from "bun:test";
import { DRAWN_USERS, withHeavyUser } from "../../src/sim/heavy-user.ts";
import type { TraceJob } from "../../src/sim/swf.ts";

/** `n` jobs of user `user`, each `procs` x `runtime`. */
const jobsOf = (user: number | undefined, n: number, procs: number, runtime: number, first: number): TraceJob[] =>
  Array.from({ length: n }, (_, k) => ({ id: first + k, line: first + k, submit: first + k, runtime, procs, estimate: runtime, user }));

function parts(jobs: readonly TraceJob[]): Map<number, number> {
  let total = 0;
  const by = new Map<number, number>();
  for (const j of jobs) {
    total += j.procs * j.runtime;
    by.set(j.user!, (by.get(j.user!) ?? 0) + j.procs * j.runtime);
  }
  return new Map([...by].map(([u, w]) => [u, w / total]));
}

const sameJobs = (a: readonly TraceJob[], b: readonly TraceJob[]) => expect(a.map((j) => ({ ...j, user: 0 }))).toEqual(b.map((j) => ({ ...j, user: 0 })));

describe("withHeavyUser", () => {
  test("a user with more than the share gives jobs away, spread over the other users: none becomes a second heavy one", () => {
    // User 1 has 60 % of the work, users 2..5 10 % each.
    const trace = [...jobsOf(1, 600, 2, 50, 0), ...[2, 3, 4, 5].flatMap((u) => jobsOf(u, 100, 2, 50, u * 1000))];
    const { jobs, heavy } = withHeavyUser(trace, 0.3);
    expect(heavy).toBe(1);
    const p = parts(jobs);
    expect(p.get(1)).toBeCloseTo(0.3, 2);
    for (const u of [2, 3, 4, 5]) expect(p.get(u)!).toBeLessThan(0.3);
    // Only user 1's jobs moved; every job is the same but for its user; deterministic.
    for (let i = 0; i < trace.length; i++) if (trace[i]!.user !== 1) expect(jobs[i]!.user).toBe(trace[i]!.user!);
    sameJobs(jobs, trace);
    expect(withHeavyUser(trace, 0.3)).toEqual({ jobs, heavy });
  });

  test("a heaviest user below the share takes other users' jobs (the lowest id on a tie)", () => {
    const trace = [2, 3, 4, 5].flatMap((u) => jobsOf(u, 100, 2, 50, u * 1000));
    const { jobs, heavy } = withHeavyUser(trace, 0.3);
    expect(heavy).toBe(2);
    const p = parts(jobs);
    expect(p.get(2)).toBeCloseTo(0.3, 2);
    for (let i = 0; i < trace.length; i++) if (trace[i]!.user === 2) expect(jobs[i]!.user).toBe(2);
    sameJobs(jobs, trace);
  });

  test("no user ids: each job draws one of the drawn users first; one user alone gives jobs to a new one", () => {
    const drawn = withHeavyUser(jobsOf(undefined, 2000, 1, 10, 0), 0.3);
    const p = parts(drawn.jobs);
    expect(p.size).toBe(DRAWN_USERS);
    expect(p.get(drawn.heavy)).toBeCloseTo(0.3, 2);
    const alone = withHeavyUser(jobsOf(7, 100, 1, 10, 0), 0.3);
    expect(alone.heavy).toBe(7);
    expect([...parts(alone.jobs)].sort()).toEqual([
      [7, 0.3],
      [8, 0.7],
    ]);
  });
});
