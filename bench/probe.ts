/**
 * probeAdapt() with nothing pending, in a rank run by ebb (its probe slot in node-shared memory):
 * ns per call, the await included. Baseline, same process: awaiting an already-resolved promise.
 */
import { startBenchCluster } from "./cluster.ts";
import type { Bench } from "./lib.ts";

export default {
  name: "probe",
  description: "ns per probeAdapt() with nothing pending",
  async run({ quick }) {
    const cluster = await startBenchCluster(1);
    try {
      const p = Bun.spawn(
        [process.execPath, new URL("../src/main.ts", import.meta.url).pathname, "run", "-n", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "1", "--", process.execPath, new URL("programs/probe.ts", import.meta.url).pathname, quick ? "500000" : "5000000"],
        { env: cluster.env, stdout: "pipe", stderr: "inherit" },
      );
      const out = await new Response(p.stdout).text();
      const m = /probe_ns=([\d.]+) await_ns=([\d.]+)/.exec(out);
      if ((await p.exited) !== 0 || !m) throw new Error(`probe program failed: ${out}`);
      const probe = Number(m[1]);
      return [{ name: "probeAdapt(), nothing pending", value: probe, unit: "ns", baseline: { name: "await of a resolved promise", value: Number(m[2]) }, better: "lower", goal: "<= 1000 ns", met: probe <= 1000 }];
    } finally {
      await cluster.stop();
    }
  },
} satisfies Bench;
