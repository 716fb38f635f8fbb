/**
 * Local curiosity, not the official benchmark (bench/comm.ts is the lead's): ping-pong latency and
 * bandwidth between two processes, and allreduce, over ebb/comm. Reuses the test launcher.
 *
 *   bun bench/_comm-local.ts            # both ranks on one node (Unix socket)
 *   bun bench/_comm-local.ts tcp        # ranks on two node names (TCP over loopback)
 *   bun bench/_comm-local.ts allreduce 4
 */
import { type Comm, finalize, initWorld } from "../src/comm/index.ts";
import { testBootstrap } from "../test/support/comm-kvs.ts";
import { Job } from "../test/support/comm-launcher.ts";
import { report } from "../test/support/comm-report.ts";

const mode = process.argv[2] ?? "unix";

if (process.env.EBB_TEST_KVS) {
  const boot = await testBootstrap();
  const w: Comm = await initWorld(boot);
  if (mode === "allreduce") {
    for (const bytes of [8, 1024, 64 * 1024, 1024 * 1024]) {
      const x = new Float64Array(bytes / 8).fill(w.rank);
      const iters = bytes >= 65536 ? 20 : 500;
      for (let i = 0; i < 5; i++) await w.allreduce(x, "sum");
      await w.barrier();
      const t0 = Bun.nanoseconds();
      for (let i = 0; i < iters; i++) await w.allreduce(x, "sum");
      const us = (Bun.nanoseconds() - t0) / iters / 1e3;
      if (w.rank === 0) report({ what: `allreduce n=${w.size}`, bytes, us });
    }
  } else {
    for (const bytes of [8, 64, 512, 4096, 32768, 262144, 1048576, 4194304]) {
      const buf = new Uint8Array(bytes);
      const iters = bytes >= 256 * 1024 ? 30 : bytes >= 16 * 1024 ? 300 : 3000;
      const round = async () => {
        if (w.rank === 0) {
          await w.send(1, buf, 0);
          await w.recv(1, 0);
        } else {
          await w.recv(0, 0);
          await w.send(0, buf, 0);
        }
      };
      for (let i = 0; i < Math.min(50, iters); i++) await round();
      const t0 = Bun.nanoseconds();
      for (let i = 0; i < iters; i++) await round();
      const oneWayUs = (Bun.nanoseconds() - t0) / iters / 2 / 1e3;
      if (w.rank === 0) report({ what: `ping-pong ${mode}`, bytes, us: oneWayUs, MBps: bytes / oneWayUs });
    }
  }
  await finalize();
  boot.kvs.close();
} else {
  const n = mode === "allreduce" ? Number(process.argv[3] ?? 4) : 2;
  const job = new Job({ program: import.meta.path, n, nodes: mode === "tcp" ? 2 : 1, args: [mode], deadlineMs: 300_000 });
  const results = await job.finished();
  for (const r of results) {
    if (r.code !== 0) console.error(r.name, r.code, r.stderr);
    for (const x of r.reports) {
      const o = x as { what: string; bytes: number; us: number; MBps?: number };
      console.log(`${o.what.padEnd(22)} ${String(o.bytes).padStart(8)} B  ${o.us.toFixed(1).padStart(9)} us${o.MBps ? `  ${o.MBps.toFixed(0).padStart(6)} MB/s` : ""}`);
    }
  }
}
