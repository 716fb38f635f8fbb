// The 8 B ping-pong on one node with rank 0 timing each round trip, then the idle wait; one round
// of `bench comm`'s paired latency rounds (bench/comm-latency.ts), pingpong-rtt.c the same in C.
// Prints (ns unless said):
//   rtt p10=. p50=. p90=. p99=. mean=.   single round trips, 20,000 after 100,000 untimed ones
//                                        (JavaScriptCore reaches its top tier after tens of thousands)
//   slow>20us n=. ms=. max_us=.          round trips over 20 µs: a preemption, a collection
//   hist <1us:n/ns ... >=1ms:n/ns         per bucket of round-trip time: the count, and its share
//                                        of the mean (the bucket's sum / 20,000)
//   cpu rank=R ns_per_rtt=.              each rank's CPU time (user + system) over the timed ones
//   wait ms=5 rtt_us=.                   rank 0 sleeps 5 ms, 20 times, then sends 8 B; the median
//                                        round trip of that message and its answer
//   cpu wait ms=5 rank=1 pct=.           rank 1's CPU time over the time it spent in those receives
// Percentiles of single round trips are far less at the mercy of a loaded machine than a mean over
// thousands (one preemption adds tens of µs to a mean). The two clock reads per round trip are in
// every figure alike.
import { finalizeAdapt, initAdapt } from "../../src/comm/index.ts";

const { world } = await initAdapt();
const buf = new Uint8Array(8);
const into = new Uint8Array(8);
const N = 20000;
const WARM = 100000;
const rtt = new Float64Array(N);
const peer = 1 - world.rank;
const cpuNs = (c: NodeJS.CpuUsage) => (c.user + c.system) * 1000;
let c0 = process.cpuUsage();
for (let i = -WARM; i < N; i++) {
  if (i === 0) c0 = process.cpuUsage();
  if (world.rank === 0) {
    const t = Bun.nanoseconds();
    await world.send(peer, buf);
    await world.recv(peer, 0, into);
    if (i >= 0) rtt[i] = Bun.nanoseconds() - t;
  } else {
    await world.recv(peer, 0, into);
    await world.send(peer, buf);
  }
}
console.log(`cpu rank=${world.rank} ns_per_rtt=${(cpuNs(process.cpuUsage(c0)) / N).toFixed(0)}`);
if (world.rank === 0) {
  const s = Array.from(rtt).sort((a, b) => a - b);
  const mean = s.reduce((a, x) => a + x, 0) / N;
  const slow = s.filter((x) => x > 20_000);
  console.log(`slow>20us n=${slow.length} ms=${(slow.reduce((a, x) => a + x, 0) / 1e6).toFixed(2)} max_us=${(s[N - 1]! / 1000).toFixed(0)}`);
  // Where the mean goes: per bucket of round-trip time, the count and its share of the mean (ns).
  const edges = [1e3, 2e3, 5e3, 2e4, 1e5, 1e6, Number.POSITIVE_INFINITY];
  const hist = edges.map((e, k) => {
    const inIt = s.filter((x) => x >= (k ? edges[k - 1]! : 0) && x < e);
    return `${Number.isFinite(e) ? `<${e / 1000}us` : ">=1ms"}:${inIt.length}/${(inIt.reduce((a, x) => a + x, 0) / N).toFixed(0)}`;
  });
  console.log(`hist ${hist.join(" ")}`);
  console.log(`rtt p10=${s[N / 10]!.toFixed(0)} p50=${s[N / 2]!.toFixed(0)} p90=${s[(N * 9) / 10]!.toFixed(0)} p99=${s[(N * 99) / 100]!.toFixed(0)} mean=${mean.toFixed(0)}`);
}

const WAITS = 20;
const WAIT_MS = 5;
if (world.rank === 0) {
  const rtts: number[] = [];
  for (let i = 0; i < WAITS; i++) {
    await Bun.sleep(WAIT_MS);
    const t = Bun.nanoseconds();
    await world.send(1, buf);
    await world.recv(1, 0, into);
    rtts.push((Bun.nanoseconds() - t) / 1000);
  }
  rtts.sort((a, b) => a - b);
  console.log(`wait ms=${WAIT_MS} rtt_us=${rtts[WAITS >> 1]!.toFixed(2)}`);
} else {
  let cpu = 0;
  let wall = 0;
  for (let i = 0; i < WAITS; i++) {
    const c = process.cpuUsage();
    const t = Bun.nanoseconds();
    await world.recv(0, 0, into);
    wall += Bun.nanoseconds() - t;
    cpu += cpuNs(process.cpuUsage(c));
    await world.send(0, buf);
  }
  console.log(`cpu wait ms=${WAIT_MS} rank=1 pct=${((cpu / wall) * 100).toFixed(1)}`);
}
await finalizeAdapt();
