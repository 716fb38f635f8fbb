// The 8 B message path's CPU cost, without a second process: two transports in this one process,
// linked by their shared-memory rings, play ping-pong. Nothing waits for another core or the
// scheduler, so the CPU time per round trip (CPU time, not wall time: the machine may be shared) is the
// JavaScript both sides run per message pair (send,
// ring write, poll, parse, match, settle, resume), and the heap growth per message counts what
// each message allocates. Prints "path cpu_ns_per_roundtrip=N min=M heap_bytes_per_msg=B".
// A CFG detector steps as under ebb run (its table goes to a file in /tmp); EBB_COMM_PATH_CFG=0: none.
// Each message is received into a buffer (recv(into)); EBB_COMM_PATH_INTO=0: as a new array.
import { heapStats } from "bun:jsc";
import { startCfg } from "../../src/comm/cfg.ts";
import { Transport } from "../../src/comm/transport.ts";
import { createWorld } from "../../src/comm/world.ts";

if (process.env.EBB_COMM_PATH_CFG !== "0") startCfg({ EBB_CFG_FILE: `/tmp/ebb-comm-path-${process.pid}.cfg` });
const a = Transport.open({ node: "n" });
const b = Transport.open({ node: "n" });
const cards = [a.card, b.card];
const w0 = createWorld(a, cards);
const w1 = createWorld(b, cards);
const buf = new Uint8Array(8);
const viaInto = process.env.EBB_COMM_PATH_INTO !== "0";
const into0 = viaInto ? new Uint8Array(8) : undefined;
const into1 = viaInto ? new Uint8Array(8) : undefined;

async function rounds(n: number): Promise<void> {
  const side1 = (async () => {
    for (let i = 0; i < n; i++) {
      await w1.recv(0, 0, into1);
      await w1.send(0, buf);
    }
  })();
  for (let i = 0; i < n; i++) {
    await w0.send(1, buf);
    await w0.recv(1, 0, into0);
  }
  await side1;
}

await rounds(60_000); // to the top JIT tier
const N = Number(process.argv[2] ?? 100_000);
const times: number[] = [];
// Bytes allocated per message: a short run after a full collection, the heap's growth over it
// (JSC counts its heap in blocks: a coarse measure, but it moves with the objects made).
Bun.gc(true);
const c0 = heapStats().heapCapacity;
await rounds(5000);
const perMsg = (heapStats().heapCapacity - c0) / 10000;
for (let r = 0; r < 5; r++) {
  Bun.gc(true);
  const c0 = process.cpuUsage();
  await rounds(N);
  const c = process.cpuUsage(c0);
  times.push(((c.user + c.system) * 1000) / N);
}
times.sort((x, y) => x - y);
console.log(`path cpu_ns_per_roundtrip=${times[2]!.toFixed(0)} min=${times[0]!.toFixed(0)} heap_bytes_per_msg=${perMsg.toFixed(0)}`);
await Promise.all([a.close(), b.close()]);
(await import("node:fs")).rmSync(`/tmp/ebb-comm-path-${process.pid}.cfg`, { force: true });
