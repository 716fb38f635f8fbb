import { expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { simulate } from "../../src/sim/engine.ts";
import { reshapeLuScenario } from "../../src/sim/scenarios.ts";

// ReSHAPE Fig. 3a: LU (N = 12000), 10 iterations from 2 processors: 862.9 s resized vs 1296.3 s static.
test("ReSHAPE's LU run: expand while it helps, revert 16 -> 12, about 863 s against 1296 s static", () => {
  const s = reshapeLuScenario();
  const elastic = simulate(s.jobs, { nodes: s.nodes, config: resolveConfig({ policy: "reshape", settle: 0 }) });
  const rigid = simulate(s.jobs, { nodes: s.nodes, config: resolveConfig({ policy: "easy" }) });
  expect(elastic.jobs[0]!.end).toBeCloseTo(862.9, 1);
  expect(rigid.jobs[0]!.end).toBeCloseTo(1296.3, 1);
  // 2 -> 4 -> 6 -> 9 -> 12 -> 16, back to 12.
  expect(elastic.resizes).toBe(6);
  expect(elastic.jobs[0]!.peakNodes).toBe(16);
});
