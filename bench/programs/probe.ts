// ns per probeAdapt() with nothing pending, and the floor: awaiting an already-resolved promise.
import { finalizeAdapt, initAdapt, probeAdapt } from "../../src/comm/index.ts";

const calls = Number(process.argv[2] ?? 2_000_000);
await initAdapt();
const resolved = Promise.resolve(0);
async function measure(f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 100_000; i++) await f();
  const t0 = Bun.nanoseconds();
  for (let i = 0; i < calls; i++) await f();
  return (Bun.nanoseconds() - t0) / calls;
}
const probe = await measure(probeAdapt);
const floor = await measure(() => resolved);
console.log(`probe_ns=${probe.toFixed(1)} await_ns=${floor.toFixed(1)}`);
await finalizeAdapt();
