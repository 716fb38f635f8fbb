// Ping-pong between ranks 0 and 1 of a world whose two ranks are on different nodes (TCP), for
// bench/comm-tcp.ts: 64 KiB, 1 MiB and 4 MiB, each received into a buffer of its own (recv(into)),
// after 20 untimed rounds. Prints "pingpong bytes=N us=ONE_WAY" (rank 0) and, per rank,
// "cpu pingpong bytes=N rank=R pct=P" (CPU time over wall time), as programs/tcp-pingpong.c does.
import { startWorld } from "../../test/support/comm-boot.ts";
import { exchange } from "./ping-pong-exchange.ts";

const { world, done } = await startWorld();
for (const n of [65536, 1 << 20, 4 << 20]) {
  const buf = new Uint8Array(n);
  const into = new Uint8Array(n);
  const reps = n >= 1 << 20 ? 60 : 400;
  await exchange(world, buf, into, 20);
  const c0 = process.cpuUsage();
  const t0 = Bun.nanoseconds();
  await exchange(world, buf, into, reps);
  const ns = Bun.nanoseconds() - t0;
  const c = process.cpuUsage(c0);
  if (world.rank === 0) console.log(`pingpong bytes=${n} us=${(ns / reps / 2 / 1000).toFixed(2)}`);
  console.log(`cpu pingpong bytes=${n} rank=${world.rank} pct=${((((c.user + c.system) * 1000) / ns) * 100).toFixed(0)}`);
}
await done();
