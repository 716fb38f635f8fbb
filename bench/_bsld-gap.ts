/**
 * Where one policy's mean bounded slowdown comes from against another's (issue 35), from an
 * `ebb sim --jobs-csv` file of one seed holding both: each job's bsld split into its wait and its
 * run time over its reference time, summed by reference time and by the size asked for; how many
 * jobs each started below their size; and the part of the gap carried by jobs that waited over
 * 10 minutes while a rigid job of at least BIG nodes ran (a whole-machine job every arrival waits
 * for under EASY's promise). Run: bun bench/_bsld-gap.ts FILE.csv [A=ebb] [B=drms-rs] [BIG=200].
 */
import { bsld, jobRows, TAU, type JobRow as Row } from "./_jobs-csv.ts";

const [file, a = "ebb", b = "drms-rs", bigArg = "200"] = process.argv.slice(2);
if (!file) throw new Error("usage: bun bench/_bsld-gap.ts FILE.csv [A] [B] [BIG]");
const big = Number(bigArg);

const [A, B] = jobRows(file, a, b);

const waitPart = (r: Row) => r.wait / Math.max(r.reference, TAU);
const runPart = (r: Row) => (r.turnaround - r.wait) / Math.max(r.reference, TAU);
const ids = [...A.keys()].filter((id) => B.has(id));
const sum = (xs: number[], f: (id: number) => number) => xs.reduce((s, id) => s + f(id), 0);
const n = ids.length;
const gap = sum(ids, (id) => bsld(A.get(id)!) - bsld(B.get(id)!));

console.log(`${n} jobs; mean bsld ${a} ${(sum(ids, (id) => bsld(A.get(id)!)) / n).toFixed(2)}, ${b} ${(sum(ids, (id) => bsld(B.get(id)!)) / n).toFixed(2)}`);
for (const [p, m] of [[a, A], [b, B]] as const) {
  console.log(`${p}: per job wait/ref ${(sum(ids, (id) => waitPart(m.get(id)!)) / n).toFixed(2)}, run/ref ${(sum(ids, (id) => runPart(m.get(id)!)) / n).toFixed(2)}; started below the size asked ${ids.filter((id) => m.get(id)!.startNodes < m.get(id)!.nodes).length}`);
}

function table(title: string, key: (r: Row) => number, edges: number[]): void {
  console.log(`${title}: jobs, bsld sum ${a} / ${b}, gap, wait/ref sum ${a} / ${b}, run/ref sum ${a} / ${b}`);
  for (let i = 0; i + 1 < edges.length; i++) {
    const lo = edges[i]!;
    const hi = edges[i + 1]!;
    const xs = ids.filter((id) => key(A.get(id)!) >= lo && key(A.get(id)!) < hi);
    if (xs.length === 0) continue;
    const s = (f: (r: Row) => number, m: Map<number, Row>) => sum(xs, (id) => f(m.get(id)!)).toFixed(0);
    const d = sum(xs, (id) => bsld(A.get(id)!) - bsld(B.get(id)!));
    console.log(`  [${lo}, ${hi}) ${xs.length}: ${s(bsld, A)} / ${s(bsld, B)}, ${d.toFixed(0)} (${((100 * d) / gap).toFixed(0)} % of the gap), ${s(waitPart, A)} / ${s(waitPart, B)}, ${s(runPart, A)} / ${s(runPart, B)}`);
  }
}
table("by reference time (s)", (r) => r.reference, [0, 10, 60, 300, 1800, 14400, Number.POSITIVE_INFINITY]);
table("by nodes asked", (r) => r.nodes, [1, 2, 9, 17, 33, 65, Number.POSITIVE_INFINITY]);

// Jobs of A that waited over 10 minutes while one of A's rigid jobs of at least `big` nodes ran.
const wholeRuns = [...A.values()].filter((r) => r.minNodes >= big && r.minNodes === r.nodes).map((r) => [r.start, r.end] as const);
const blocked = ids.filter((id) => {
  const r = A.get(id)!;
  return r.wait > 600 && wholeRuns.some(([s, e]) => s < r.start && e > r.submit);
});
const blockedGap = sum(blocked, (id) => bsld(A.get(id)!) - bsld(B.get(id)!));
console.log(`${a}'s jobs that waited > 600 s while a rigid job of >= ${big} nodes ran: ${blocked.length}, ${blockedGap.toFixed(0)} of the gap's ${gap.toFixed(0)} (${((100 * blockedGap) / gap).toFixed(0)} %)`);
// The other's wait for those big jobs: a policy that keeps no reservation can starve them.
const bigIds = ids.filter((id) => A.get(id)!.minNodes >= big && A.get(id)!.minNodes === A.get(id)!.nodes);
if (bigIds.length > 0) {
  const meanWait = (m: Map<number, Row>) => (sum(bigIds, (id) => m.get(id)!.wait) / bigIds.length).toFixed(0);
  const maxWait = (m: Map<number, Row>) => Math.max(...bigIds.map((id) => m.get(id)!.wait)).toFixed(0);
  console.log(`rigid jobs of >= ${big} nodes: ${bigIds.length}; mean wait ${a} ${meanWait(A)} s, ${b} ${meanWait(B)} s; longest ${a} ${maxWait(A)} s, ${b} ${maxWait(B)} s`);
}
