/**
 * The longest turn a 16 MiB fence costs a hop, whole (one `fence.in`) against in pieces
 * (pmi/kvs-pieces.ts): encode, parse and validate, CPU time (process.cpuUsage), alternating the
 * order each round. `bun bench/_fence-pieces.ts [rounds]`.
 */
import { StepUp } from "../src/proto/step.ts";
import { kvsPieces } from "../src/pmi/kvs-pieces.ts";
import { KVS_MAX_BYTES } from "../src/pmi/limits.ts";

const rounds = Number(process.argv[2] ?? 6);
const kvs: Record<string, string> = {};
const value = "v".repeat(900);
for (let i = 0, units = 0; units < KVS_MAX_BYTES - 1000; i++) {
  kvs[`m1-${i}`] = value;
  units += `m1-${i}`.length + value.length;
}
const cpuMs = (f: () => void) => {
  const c = process.cpuUsage();
  f();
  const u = process.cpuUsage(c);
  return (u.user + u.system) / 1000;
};
const hop = (msg: object) => {
  if (!StepUp.safeParse(JSON.parse(JSON.stringify(msg))).success) throw new Error("invalid");
};
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const whole: number[] = [];
const pieces: number[] = [];
const count = kvsPieces(kvs).length;
for (let r = 0; r < rounds; r++) {
  const runs = [
    () => whole.push(cpuMs(() => hop({ t: "fence.in", step: "1.0", seq: 0, count: 1, kvs }))),
    () => pieces.push(Math.max(...kvsPieces(kvs).map((p, i, all) => cpuMs(() => hop({ t: "fence.in", step: "1.0", seq: 0, count: i === all.length - 1 ? 1 : 0, kvs: p, ...(i < all.length - 1 ? { more: true } : {}) }))))),
  ];
  if (r % 2) runs.reverse();
  for (const run of runs) run();
}
const [w, p] = [median(whole), median(pieces)];
console.log(`16 MiB fence.in, one hop (encode + parse + validate), CPU of the longest turn, median of ${rounds}: whole ${w.toFixed(0)} ms, in ${count} pieces ${p.toFixed(0)} ms (${(w / p).toFixed(1)}x less); load ${(await Bun.file("/proc/loadavg").text()).split(" ")[0]}`);
