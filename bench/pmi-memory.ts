/**
 * An agent's memory after steps that fill the PMI KVS to its cap: one agent (its own process, the
 * compiled binary), 100 steps in a row (20 with --quick), each one rank putting 900-byte values
 * over PMI-1 until a put is refused at KVS_MAX_BYTES, then fencing. The agent's RSS after them,
 * once settled, against the same agent's RSS when fresh, measured in the same run (goal: <= 2x);
 * also its highest RSS while the steps ran.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KVS_MAX_BYTES } from "../src/pmi/limits.ts";
import { commandLines } from "../test/support/cluster.ts";
import { compiledEbb, runCommand, startBenchCluster } from "./cluster.ts";
import type { Bench, Figure } from "./lib.ts";

const FILLER = new URL("../test/pmi/fixtures/kvs-filler.ts", import.meta.url).pathname;

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

/** The RSS once it stops falling: sampled each second for up to `maxS` s, the lowest of the last 5 samples. */
async function settledRss(pid: number, maxS = 30): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < maxS; i++) {
    samples.push(rssMb(pid));
    if (samples.length >= 5 && Math.min(...samples.slice(-5)) >= Math.min(...samples.slice(0, -5))) break;
    await Bun.sleep(1000);
  }
  return Math.min(...samples.slice(-5));
}

export default {
  name: "pmi-memory",
  description: "agent RSS after 100 steps that each fill the PMI KVS to its cap, vs the fresh agent",
  async run({ quick }) {
    const steps = quick ? 20 : 100;
    const ebb = await compiledEbb();
    const cluster = await startBenchCluster(1, { ebb, layout: "processes", log: "error" }) // each step's refusal is logged as a warning;
    const figures: Figure[] = [];
    try {
      const agent = commandLines().find((p) => p.cmd.includes(" agent ") && p.cmd.includes(join(cluster.dir, "agents")));
      if (!agent) throw new Error("the bench cluster's agent process was not found");
      const fresh = await settledRss(agent.pid, 10);
      let peak = fresh;
      let accepted = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMb(agent.pid))), 100);
      const t0 = performance.now();
      for (let s = 0; s < steps; s++) {
        const { out } = await runCommand([...ebb, "run", "-n", "1", process.execPath, FILLER, "v1", `s${s}`, `s${s - 1}`, "900"], cluster.env);
        const r = JSON.parse(out) as { accepted: number; refused: { msg: string }; other: boolean; fence: number };
        if (!r.refused.msg.includes("KVS_MAX_BYTES") || r.other || r.fence !== 0) throw new Error(`step ${s} did not fill its own KVS to the cap: ${out}`);
        accepted = r.accepted;
      }
      const seconds = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      const right = rssMb(agent.pid);
      const settled = await settledRss(agent.pid);
      const data = `${steps} steps x ${accepted} puts of 900 B (${(KVS_MAX_BYTES / 2 ** 20).toFixed(0)} MiB cap), ${seconds.toFixed(0)} s`;
      figures.push({ name: `agent RSS after ${data}, settled`, value: settled, unit: "MB", baseline: { name: "fresh agent", value: fresh }, better: "lower", goal: "<= 2.0x fresh", met: settled <= 2 * fresh });
      figures.push({ name: "agent RSS right after the last step", value: right, unit: "MB", baseline: { name: "fresh agent", value: fresh }, better: "lower" });
      figures.push({ name: "agent RSS, highest while the steps ran", value: peak, unit: "MB", baseline: { name: "fresh agent", value: fresh }, better: "lower" });
    } finally {
      await cluster.stop();
    }
    return figures;
  },
} satisfies Bench;
