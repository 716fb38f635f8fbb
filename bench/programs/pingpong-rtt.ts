// The 8 B ping-pong of pingpong.ts ("latency"), with rank 0 timing each round trip on its own:
// prints "rtt p10=N p50=M p90=. p99=. mean=." (ns). Percentiles of single round trips are far less at the mercy of a
// loaded machine than a mean over thousands (one preemption adds tens of µs to a mean); for A/B
// runs of two builds of ebb/comm (bench/_comm-rtt-ab.ts). The two clock reads per round trip are
// in every figure alike.
import { finalizeAdapt, initAdapt } from "../../src/comm/index.ts";

const { world } = await initAdapt();
const buf = new Uint8Array(8);
const into = new Uint8Array(8);
const N = 20000;
const WARM = 100000; // to JavaScriptCore's top tier, as pingpong.ts
const rtt = new Float64Array(N);
const peer = 1 - world.rank;
for (let i = -WARM; i < N; i++) {
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
if (world.rank === 0) {
  const s = Array.from(rtt).sort((a, b) => a - b);
  const mean = s.reduce((a, x) => a + x, 0) / N;
  const slow = s.filter((x) => x > 20_000); // a preemption, a collection, an event loop turn
  console.log(`slow>20us n=${slow.length} ms=${(slow.reduce((a, x) => a + x, 0) / 1e6).toFixed(2)} max_us=${(s[N - 1]! / 1000).toFixed(0)}`);
  console.log(`rtt p10=${s[N / 10]!.toFixed(0)} p50=${s[N / 2]!.toFixed(0)} p90=${s[(N * 9) / 10]!.toFixed(0)} p99=${s[(N * 99) / 100]!.toFixed(0)} mean=${mean.toFixed(0)}`);
}
await finalizeAdapt();
