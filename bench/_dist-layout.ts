/**
 * Micro-bench (not in `npm run bench`): CPU per step of what every agent of a step works out from
 * its layout, block against cyclic, at 1,024 nodes of 64 ranks: its node's ranks (stepRanksOf, a
 * fresh spec each time as each launch brings one) and the PMI_process_mapping text (step-pmi.ts
 * processMappingOf). ABBA rounds;
 * medians and the cyclic/block ratio.
 *   bun bench/_dist-layout.ts [ROUNDS]
 */
import { stepRanksOf } from "../src/roles/agent/launch-checks.ts";
import { processMappingOf } from "../src/roles/agent/step-pmi.ts";
import type { StepSpec } from "../src/proto/step.ts";

const NODES = 1024;
const PER_NODE = 64;
const rounds = Number(process.argv[2] ?? 20);
const tasks = Array<number>(NODES).fill(PER_NODE);
const spec = (cyclic: boolean) => ({ tasks: [...tasks], ...(cyclic ? { distribution: { kind: "cyclic" } } : {}) }) as unknown as StepSpec;

/** CPU µs of one agent's work for a step: its node's ranks and the process map. */
function once(cyclic: boolean): number {
  const t0 = process.cpuUsage();
  const s = spec(cyclic);
  let n = stepRanksOf(s, NODES - 1).length;
  n += processMappingOf(s).length;
  const d = process.cpuUsage(t0);
  if (n === 0) throw new Error("nothing computed");
  return d.user + d.system;
}

for (let i = 0; i < 20; i++) once(i % 2 === 0);
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < rounds; r++) for (const cyclic of r % 2 === 0 ? [false, true, true, false] : [true, false, false, true]) (cyclic ? b : a).push(once(cyclic));
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(`${NODES} nodes x ${PER_NODE} ranks, ${rounds} ABBA rounds: block ${median(a).toFixed(0)} us, cyclic ${median(b).toFixed(0)} us CPU per step per agent; cyclic/block ${(median(b) / median(a)).toFixed(1)}x`);
