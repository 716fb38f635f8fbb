import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { simulate } from "../../src/sim/engine.ts";
import { metrics } from "../../src/sim/metrics.ts";
import { apmScenario } from "../../src/sim/scenarios.ts";

// APM (Hungershöfer et al.), Table 1: 4 jobs on 8 processors, free and instant reallocation.
const run = (policy: "apm-equi" | "apm-maxs") => {
  const s = apmScenario();
  return metrics(simulate(s.jobs, { nodes: s.nodes, config: resolveConfig({ policy, settle: 0 }) }));
};

describe("APM scenario (Table 1)", () => {
  const equi = run("apm-equi");
  const maxs = run("apm-maxs");

  test("equipartition's makespan is about 1380 s (within 3%)", () => {
    expect(Math.abs(equi.makespan / 1380 - 1)).toBeLessThan(0.03);
  });

  test("maxS*'s makespan is about 1300 s (within 3%) and shorter than equipartition's", () => {
    expect(Math.abs(maxs.makespan / 1300 - 1)).toBeLessThan(0.03);
    expect(maxs.makespan).toBeLessThan(equi.makespan);
  });

  test("equipartition has the better mean response time", () => {
    expect(equi.meanTurnaround).toBeLessThan(maxs.meanTurnaround);
  });
});
