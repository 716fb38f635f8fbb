import { describe, expect, test } from "bun:test";
import { StepCpus, type StepWaiter } from "../../src/roles/controller/step-cpus.ts";
import type { StepGrant } from "../../src/proto/requests.ts";
import type { LauncherSession } from "../../src/roles/controller/state.ts";

/** A launcher connection: only its identity matters here. */
const conn = (name: string) => ({ name }) as unknown as LauncherSession;

/** A job of `cpus` CPUs on node n1; each waiter asks for `need` of them and records what became of it. */
function farm(cpus: number) {
  const s = new StepCpus();
  let nextStep = 1;
  const log: string[] = [];
  const ask = (owner: LauncherSession, name: string, need: number): StepWaiter => ({
    owner,
    tryGrant: () => {
      if (cpus - s.held(1, "n1") < need) return undefined;
      const stepId = nextStep++;
      const taken = s.heldCores(1, "n1");
      s.hold(1, stepId, owner, ["n1"], [[...Array(cpus).keys()].filter((c) => !taken.has(c)).slice(0, need)]);
      return { stepId } as StepGrant;
    },
    resolve: (g) => log.push(`${name} granted step ${g.stepId}`),
    reject: (e) => log.push(`${name} failed: ${String(e)}`),
  });
  return { s, log, ask };
}

describe("StepCpus: exact steps' holds and waiting steps", () => {
  test("a release grants the waiting steps that fit now, in the order they came; the step id is given at grant", () => {
    const { s, log, ask } = farm(2);
    const a = conn("a");
    s.hold(1, 0, a, ["n1"], [[0, 1]]);
    expect(s.wait(1, ask(conn("b"), "b", 2))).toBe(true);
    expect(s.wait(1, ask(conn("c"), "c", 1))).toBe(true);
    expect(s.wait(1, ask(conn("d"), "d", 1))).toBe(true);
    expect(s.counts(1)).toEqual({ running: 1, waiting: 3 });
    s.release(1, 0);
    // b (2 CPUs) takes both; c and d wait on.
    expect(log).toEqual(["b granted step 1"]);
    s.release(1, 1);
    expect(log).toEqual(["b granted step 1", "c granted step 2", "d granted step 3"]);
    expect(s.held(1, "n1")).toBe(2);
    // c and d hold a core each, not the same one.
    expect([...s.heldCores(1, "n1")].sort()).toEqual([0, 1]);
  });

  test("a smaller step behind a larger one that does not fit goes first", () => {
    const { s, log, ask } = farm(2);
    s.hold(1, 0, conn("a"), ["n1"], [[0]]);
    s.wait(1, ask(conn("b"), "b", 2));
    s.wait(1, ask(conn("c"), "c", 1));
    s.hold(1, 9, undefined, ["n1"], [[]]);
    s.release(1, 9);
    expect(log).toEqual(["c granted step 1"]);
  });

  test("a closed connection takes its holds and its waiting steps with it", () => {
    const { s, log, ask } = farm(1);
    const a = conn("a");
    s.hold(1, 0, a, ["n1"], [[0]]);
    const b = conn("b");
    s.wait(1, ask(b, "b", 1));
    s.wait(1, ask(conn("c"), "c", 1));
    s.closed(b);
    expect(s.counts(1)).toEqual({ running: 1, waiting: 1 });
    s.closed(a);
    expect(log).toEqual(["c granted step 1"]);
  });

  test("one waiting step per connection", () => {
    const { s, ask } = farm(1);
    s.hold(1, 0, undefined, ["n1"], [[0]]);
    const b = conn("b");
    expect(s.wait(1, ask(b, "b", 1))).toBe(true);
    expect(s.wait(1, ask(b, "b2", 1))).toBe(false);
  });

  test("the job's end fails its waiting steps with the reason, and forgets its holds", () => {
    const { s, log, ask } = farm(1);
    s.hold(1, 0, undefined, ["n1"], [[0]]);
    s.wait(1, ask(conn("b"), "b", 1));
    s.jobEnded(1, () => "job 1 cancelled");
    expect(log).toEqual(["b failed: job 1 cancelled"]);
    expect(s.held(1, "n1")).toBe(0);
    expect(s.counts(1)).toEqual({ running: 0, waiting: 0 });
  });
});
