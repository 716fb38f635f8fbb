// Diagnostic, run under `ebb run -N 1 -n 2` (with BUN_JSC_logGC=1 to see collections in line):
// the 8 B ping-pong of pingpong-rtt.ts, each slow step written to stderr at once with writeSync,
// so it lands between the collector's log lines: rank 0 each round trip over 5 µs, rank 1 each
// gap over 5 µs between two of its sends. The writes themselves delay the next round trips by
// tens of µs: count the slow round trips with pingpong-rtt.ts's `hist`, not here.
//   SLOW r0 i=. us=. at=.ms   SLOW r1 i=. us=.
import { writeSync } from "node:fs";
import { finalizeAdapt, initAdapt } from "../../src/comm/index.ts";

const { world } = await initAdapt();
const buf = new Uint8Array(8);
const into = new Uint8Array(8);
const N = 20000;
const WARM = 100000;
const SLOW_NS = 5000;
const peer = 1 - world.rank;
const t0 = Bun.nanoseconds();
let last = t0;
for (let i = -WARM; i < N; i++) {
  if (world.rank === 0) {
    const t = Bun.nanoseconds();
    await world.send(peer, buf);
    await world.recv(peer, 0, into);
    const d = Bun.nanoseconds() - t;
    if (i >= 0 && d > SLOW_NS) writeSync(2, `SLOW r0 i=${i} us=${(d / 1000).toFixed(1)} at=${((t - t0) / 1e6).toFixed(2)}ms\n`);
  } else {
    await world.recv(peer, 0, into);
    await world.send(peer, buf);
    const now = Bun.nanoseconds();
    if (i >= 0 && now - last > SLOW_NS) writeSync(2, `SLOW r1 i=${i} us=${((now - last) / 1000).toFixed(1)}\n`);
    last = now;
  }
}
await finalizeAdapt();
