/**
 * bench fairshare (also printed by bench sim): fair share against submit order with one heavy
 * user. On lublin_256.swf and hpc2n_excerpt.swf, the trace's heaviest user is made to submit 30 %
 * of the work (processors x run time; sim/heavy-user.ts): it takes other users' jobs, or gives
 * its own away, each to another user drawn uniformly, by a seeded like-for-like draw, until it
 * submits 30 % and every other user less (hpc2n's user 1 has 48 %: it gives; lublin_256's
 * heaviest about 7 %: it takes). The jobs keep their SWF user id (field 12) otherwise; lublin_256
 * has none (its model has no users), so each of its jobs gets one of 16 users by a seeded draw. Each trace runs under easy and ebb (50 % malleable, seed 1, --check),
 * once in submit order and once with `--priority fairshare` (the controller's default weights
 * and half-life). Printed:
 * - the other users' mean wait, fair share / submit order, per trace and policy (goal <= 0.5 each);
 *   beside it the same with the heavy user always last (no shares), the most putting it behind
 *   the others can give: on a lightly loaded trace its jobs start when nothing waits and hold
 *   their nodes when the others' jobs come, which no order undoes (only shrinking them does: ebb);
 * - --check violations under fair share (EASY's reservation for the first job in priority order);
 * - ebb mean turnaround / easy under fair share (goal <= 1.0).
 */
import { readFileSync } from "node:fs";
import type { PolicyName } from "../src/sched/config.ts";
import { resolvePriority } from "../src/sched/priority.ts";
import { runPolicies } from "../src/sim/run.ts";
import { withHeavyUser } from "../src/sim/heavy-user.ts";
import { parseSwf, traceJobs } from "../src/sim/swf.ts";
import type { JobRecord } from "../src/sim/tally.ts";
import { table } from "../src/util/table.ts";
import type { Bench, Figure } from "./lib.ts";

const HEAVY_SHARE = 0.3;
const TRACES = [
  { file: "lublin_256.swf", nodes: 256 },
  { file: "hpc2n_excerpt.swf", nodes: 240 },
];
const POLICIES: PolicyName[] = ["easy", "ebb"];

export interface FairShareRow {
  trace: string;
  policy: PolicyName;
  /** The heavy user's part of the work, as rewritten. */
  heavyShare: number;
  otherWaitSubmit: number;
  otherWaitFair: number;
  /** The same with the heavy user always last (no shares): the most putting it behind the others gives. */
  otherWaitLast: number;
  heavyWaitSubmit: number;
  heavyWaitFair: number;
  meanTurnaroundFair: number;
  violationsFair: number;
  violationsSubmit: number;
  /** Other users whose own mean wait fell / rose under fair share, and the heaviest other user's part of the work. */
  faster: number;
  slower: number;
  heaviestOther: { user: string; share: number; waitSubmit: number; waitFair: number };
}

/** Each user's mean wait. */
function waitsByUser(jobs: readonly JobRecord[]): Map<string, number> {
  const sum = new Map<string, [number, number]>();
  for (const j of jobs) {
    const e = sum.get(j.user ?? "") ?? [0, 0];
    e[0] += j.start - j.submit;
    e[1]++;
    sum.set(j.user ?? "", e);
  }
  return new Map([...sum].map(([u, [w, n]]) => [u, w / n]));
}

const meanWait = (jobs: readonly JobRecord[], keep: (j: JobRecord) => boolean): number => {
  let n = 0;
  let sum = 0;
  for (const j of jobs) if (keep(j)) {
    n++;
    sum += j.start - j.submit;
  }
  return n > 0 ? sum / n : 0;
};

/** Every trace under easy and ebb, submit order and fair share. `prefix`: only the first jobs. */
export function fairShareRuns(prefix?: number): FairShareRow[] {
  const rows: FairShareRow[] = [];
  for (const t of TRACES) {
    const all = traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${t.file}`, import.meta.url), "utf8"))).jobs;
    const { jobs, heavy } = withHeavyUser(prefix ? all.slice(0, prefix) : all, HEAVY_SHARE);
    let total = 0;
    let heavyWork = 0;
    const work = new Map<number, number>();
    for (const j of jobs) {
      total += j.procs * j.runtime;
      if (j.user === heavy) heavyWork += j.procs * j.runtime;
      else work.set(j.user!, (work.get(j.user!) ?? 0) + j.procs * j.runtime);
    }
    const [heaviest, heaviestWork] = [...work].reduce((a, b) => (b[1] > a[1] ? b : a));
    const req = { trace: jobs, workload: { nodes: t.nodes, coresPerNode: 1, malleable: 0.5, seed: 1 }, policies: POLICIES, check: true };
    process.stderr.write(`  ${t.file}: submit order, fair share, the heavy user always last\n`);
    const submit = runPolicies(req);
    const fair = runPolicies({ ...req, priority: resolvePriority({}) });
    const last = runPolicies({ ...req, priority: resolvePriority({ shares: { [String(heavy)]: 0 } }) });
    const isHeavy = (j: JobRecord) => j.user === String(heavy);
    for (let i = 0; i < POLICIES.length; i++) {
      const s = submit.results[i]!;
      const f = fair.results[i]!;
      const ws = waitsByUser(s.run.jobs);
      const wf = waitsByUser(f.run.jobs);
      let faster = 0;
      let slower = 0;
      for (const [u, w] of ws) if (u !== String(heavy)) (wf.get(u)! < w ? faster++ : wf.get(u)! > w ? slower++ : 0);
      rows.push({
        faster,
        slower,
        heaviestOther: { user: String(heaviest), share: heaviestWork / total, waitSubmit: ws.get(String(heaviest))!, waitFair: wf.get(String(heaviest))! },
        trace: t.file.replace(".swf", ""),
        policy: POLICIES[i]!,
        heavyShare: heavyWork / total,
        otherWaitSubmit: meanWait(s.run.jobs, (j) => !isHeavy(j)),
        otherWaitFair: meanWait(f.run.jobs, (j) => !isHeavy(j)),
        otherWaitLast: meanWait(last.results[i]!.run.jobs, (j) => !isHeavy(j)),
        heavyWaitSubmit: meanWait(s.run.jobs, isHeavy),
        heavyWaitFair: meanWait(f.run.jobs, isHeavy),
        meanTurnaroundFair: f.metrics.meanTurnaround,
        violationsFair: f.run.violations.length,
        violationsSubmit: s.run.violations.length,
      });
    }
  }
  return rows;
}

/** The table and the figures of `fairShareRuns`. */
export function fairShareFigures(rows: readonly FairShareRow[], note = ""): Figure[] {
  const h = (s: number) => `${(s / 3600).toFixed(2)} h`;
  process.stdout.write(`fair share vs submit order, one heavy user with ${(HEAVY_SHARE * 100).toFixed(0)} % of the work (50 % malleable, seed 1${note})\n`);
  process.stdout.write(
    table(
      ["trace", "policy", "heavy work", "others' wait submit", "others' wait fair", "others fair/submit", "heavy always last/submit", "heavy wait submit", "heavy wait fair", "others faster/slower", "heaviest other: work, wait submit -> fair", "check submit/fair"],
      rows.map((r) => [
        r.trace,
        r.policy,
        `${(r.heavyShare * 100).toFixed(1)} %`,
        h(r.otherWaitSubmit),
        h(r.otherWaitFair),
        (r.otherWaitFair / r.otherWaitSubmit).toFixed(2),
        (r.otherWaitLast / r.otherWaitSubmit).toFixed(2),
        h(r.heavyWaitSubmit),
        h(r.heavyWaitFair),
        `${r.faster}/${r.slower}`,
        `user ${r.heaviestOther.user}: ${(r.heaviestOther.share * 100).toFixed(1)} %, ${h(r.heaviestOther.waitSubmit)} -> ${h(r.heaviestOther.waitFair)}`,
        `${r.violationsSubmit} / ${r.violationsFair}`,
      ]),
    ) + "\n",
  );
  const figures: Figure[] = rows.map((r) => {
    const v = r.otherWaitFair / r.otherWaitSubmit;
    return { name: `other users' mean wait, fair share / submit order, ${r.trace}, ${r.policy}`, value: v, unit: "x", better: "lower", goal: "<= 0.5", met: v <= 0.5 };
  });
  figures.push({ name: "--check violations under fair share, both traces and policies", value: rows.reduce((n, r) => n + r.violationsFair, 0), unit: "", better: "lower", goal: "0", met: rows.every((r) => r.violationsFair === 0) });
  for (const trace of new Set(rows.map((r) => r.trace))) {
    const e = rows.find((r) => r.trace === trace && r.policy === "easy")!;
    const b = rows.find((r) => r.trace === trace && r.policy === "ebb")!;
    const v = b.meanTurnaroundFair / e.meanTurnaroundFair;
    figures.push({ name: `ebb mean turnaround / easy under fair share, ${trace}`, value: v, unit: "x", better: "lower", goal: "<= 1.0", met: v <= 1 });
  }
  return figures;
}

const bench: Bench = {
  name: "fairshare",
  description: "fair share vs submit order with one heavy user (30 % of the work): the other users' mean wait, EASY's reservation, ebb/easy",
  async run({ quick }) {
    const prefix = quick ? 1500 : Number(process.env.EBB_SIM_JOBS) || undefined;
    return fairShareFigures(fairShareRuns(prefix), prefix ? `, first ${prefix} jobs` : "");
  },
};

export default bench;
