/**
 * Which jobs carry one policy's mean bounded slowdown above another's (issue 35), from an
 * `ebb sim --jobs-csv` file of one seed holding both: the jobs with the largest bsld difference,
 * each with its reference time, size, range and, under each policy, its wait, start size and bsld,
 * and the share of the whole gap the first N of them carry; then, per reference-time band, how
 * many jobs waited over 1 and 10 minutes and the mean wait under each. A gap carried by a handful
 * of short jobs with waits of hours is a tail, not a shift of every job (bench/_bsld-gap.ts sums
 * by bands). Run: bun bench/_bsld-tail.ts FILE.csv [A=ebb] [B=drms-rs] [TOP=20].
 */
import { bsld, jobRows, type JobRow as Row } from "./_jobs-csv.ts";

const [file, a = "ebb", b = "drms-rs", topArg = "20"] = process.argv.slice(2);
if (!file) throw new Error("usage: bun bench/_bsld-tail.ts FILE.csv [A] [B] [TOP]");
const top = Number(topArg);

const [A, B] = jobRows(file, a, b);
const ids = [...A.keys()].filter((id) => B.has(id));
const diff = (id: number) => bsld(A.get(id)!) - bsld(B.get(id)!);
const gap = ids.reduce((s, id) => s + diff(id), 0);
console.log(`${ids.length} jobs; mean bsld ${a} − ${b} = ${(gap / ids.length).toFixed(3)} (sum ${gap.toFixed(0)})`);

const worst = ids.slice().sort((x, y) => diff(y) - diff(x));
console.log(`the ${top} jobs with the largest gap: job, reference s, nodes [min, asked]; ${a}: wait s, start size, bsld; ${b}: the same; share of the gap so far`);
let sum = 0;
for (const id of worst.slice(0, top)) {
  const x = A.get(id)!;
  const y = B.get(id)!;
  sum += diff(id);
  const side = (r: Row) => `${Math.round(r.wait)} s, ${r.startNodes}, ${bsld(r).toFixed(0)}`;
  console.log(`  ${id}: ${Math.round(x.reference)} s, [${x.minNodes}, ${x.nodes}]; ${side(x)}; ${side(y)}; ${((100 * sum) / gap).toFixed(0)} %`);
}

console.log(`waits by reference time (s): jobs; over 60 s ${a} / ${b}; over 600 s ${a} / ${b}; mean wait ${a} / ${b}`);
const edges = [0, 10, 60, 300, 1800, 14400, Number.POSITIVE_INFINITY];
for (let i = 0; i + 1 < edges.length; i++) {
  const xs = ids.filter((id) => A.get(id)!.reference >= edges[i]! && A.get(id)!.reference < edges[i + 1]!);
  if (xs.length === 0) continue;
  const count = (m: Map<number, Row>, over: number) => xs.filter((id) => m.get(id)!.wait > over).length;
  const mean = (m: Map<number, Row>) => (xs.reduce((s, id) => s + m.get(id)!.wait, 0) / xs.length).toFixed(0);
  console.log(`  [${edges[i]}, ${edges[i + 1]}) ${xs.length}: ${count(A, 60)} / ${count(B, 60)}; ${count(A, 600)} / ${count(B, 600)}; ${mean(A)} / ${mean(B)}`);
}
