// Diagnostic, run under `ebb run -N 1 -n 2`: the JavaScript objects each rank makes per 8 B round
// trip of the ping-pong (heapStats().objectTypeCounts before and after 4,000 round trips, after a
// full collection and 100,000 warm-up ones), three times; each message received into a buffer
// (recv(into)), or with ALLOC_INTO=0 as a new array. Prints per rank and time:
//   alloc rank=R objects_per_rtt=Type:n ...   (types over 100 in the 4,000)
import { fullGC, heapStats } from "bun:jsc";
import { finalizeAdapt, initAdapt } from "../../src/comm/index.ts";
import { exchange } from "./ping-pong-exchange.ts";

const { world } = await initAdapt();
const buf = new Uint8Array(8);
const into = process.env.ALLOC_INTO === "0" ? undefined : new Uint8Array(8);
const N = 4000;
const pingpong = (n: number) => exchange(world, buf, into, n);
await pingpong(100000);
for (let k = 0; k < 3; k++) {
  fullGC();
  await pingpong(10);
  const before = heapStats().objectTypeCounts;
  await pingpong(N);
  const made = Object.entries(heapStats().objectTypeCounts)
    .map(([type, n]) => [type, n - (before[type] ?? 0)] as const)
    .filter(([, n]) => n > 100)
    .map(([type, n]) => `${type}:${(n / N).toFixed(2)}`);
  console.log(`alloc rank=${world.rank} objects_per_rtt=${made.join(" ")}`);
}
await finalizeAdapt();
