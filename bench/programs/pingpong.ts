// Ping-pong between ranks 0 and 1 over 8 B .. 4 MiB, then allreduce of 8 B and 1 MiB on every rank
// (the one-node 8 B latency has a program of its own, pingpong-rtt.ts).
// Prints one line per measure: "pingpong bytes=N us=ONE_WAY" and "allreduce bytes=N us=TIME", and
// every rank taking part prints "cpu MEASURE bytes=N rank=R pct=P": its CPU time (user + system)
// over the measure's wall time, so a transport that polls to win latency shows it.
import { finalizeAdapt, initAdapt } from "../../src/comm/index.ts";
import { exchange } from "./ping-pong-exchange.ts";

const { world } = await initAdapt();
const cpuStart = () => ({ cpu: process.cpuUsage(), t: Bun.nanoseconds() });
const cpuLine = (what: string, n: number, s: { cpu: NodeJS.CpuUsage; t: number }) => {
  const c = process.cpuUsage(s.cpu);
  console.log(`cpu ${what} bytes=${n} rank=${world.rank} pct=${(((c.user + c.system) * 1000) / (Bun.nanoseconds() - s.t) * 100).toFixed(0)}`);
};
const sizes = [8, 64, 1024, 16384, 262144, 1048576, 4194304];
// Like OSU's osu_latency: many rounds, untimed ones first. JavaScriptCore compiles the message
// path to its top tier only after tens of thousands of calls: at 2,000 rounds an 8 B round trip
// still took ~75 µs one way, at 10,000 ~15 µs, from 50,000 on ~2 µs. A long-running program lives
// in that last regime, so the small sizes are timed after 100,000 untimed rounds; pingpong.c runs
// the same counts.
const reps = (n: number) => (n <= 16384 ? 20000 : n <= 262144 ? 200 : 40);
const warm = (n: number) => (n <= 16384 ? 100000 : n <= 262144 ? 1000 : 40);
if (world.size >= 2 && world.rank < 2) {
  for (const n of sizes) {
    // Received into a buffer of its own, as pingpong.c (and OSU's benchmarks) do.
    const buf = new Uint8Array(n);
    const into = new Uint8Array(n);
    const r = reps(n);
    await exchange(world, buf, into, warm(n));
    const c0 = cpuStart();
    const t0 = Bun.nanoseconds();
    await exchange(world, buf, into, r);
    if (world.rank === 0) console.log(`pingpong bytes=${n} us=${((Bun.nanoseconds() - t0) / r / 2 / 1000).toFixed(2)}`);
    cpuLine("pingpong", n, c0);
  }
}
await world.barrier();
for (const n of [8, 1048576]) {
  const x = new Float64Array(n / 8).fill(world.rank);
  const r = n <= 8 ? 1000 : 40;
  for (let i = 0; i < (n <= 8 ? 100 : 20); i++) await world.allreduce(x, "sum");
  await world.barrier();
  const c0 = cpuStart();
  const t0 = Bun.nanoseconds();
  for (let i = 0; i < r; i++) await world.allreduce(x, "sum");
  if (world.rank === 0) console.log(`allreduce bytes=${n} us=${((Bun.nanoseconds() - t0) / r / 1000).toFixed(2)}`);
  cpuLine("allreduce", n, c0);
}
await finalizeAdapt();
