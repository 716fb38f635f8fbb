/**
 * Throughput of one-core jobs on shared nodes (issue 30): one-rank `true` jobs through the HTTP API
 * on 4 agents of 8 cores each, every job asking for one core (the default: up to 8 at a time on a
 * node), against the same jobs taking whole nodes (`exclusive: true`, how ebb ran every job before
 * nodes were shared: 4 at a time) on the same cluster layout, in the same run. Goal: shared >=
 * whole-node. Trials alternate the two (ABBA), each on a fresh cluster (controller and agents as
 * their own processes), once the previous one is gone; the rates are medians.
 */
import { measureTrueJobs } from "./cluster.ts";
import { median, type Bench } from "./lib.ts";

async function measure(jobs: number, exclusive: boolean): Promise<number> {
  return (await measureTrueJobs(4, jobs, { layout: "processes", cpusPerNode: 8, fields: exclusive ? { exclusive: true } : {} })).rate;
}

export default {
  name: "shared-throughput",
  description: "one-core `true` jobs on 4 agents x 8 cores: shared nodes vs whole nodes, same run",
  async run({ quick }) {
    const jobs = quick ? 200 : 1000;
    const rounds = quick ? 2 : 4;
    const shared: number[] = [];
    const whole: number[] = [];
    // A warm-up, not counted.
    await measure(Math.min(jobs, 100), false);
    for (let r = 0; r < rounds; r++) {
      for (const ex of r % 2 === 0 ? [true, false] : [false, true]) (ex ? whole : shared).push(await measure(jobs, ex));
      process.stderr.write(`  round ${r + 1}/${rounds}: whole nodes ${whole.at(-1)!.toFixed(1)}, shared ${shared.at(-1)!.toFixed(1)} jobs/s\n`);
    }
    const baseline = { name: "the same jobs on whole nodes (exclusive), as before shared nodes", value: median(whole) };
    const value = median(shared);
    return [
      { name: `${jobs} one-core jobs on shared nodes, median of ${rounds}`, value, unit: "jobs/s", baseline, better: "higher", goal: ">= 1.0x whole nodes", met: value >= baseline.value },
    ];
  },
} satisfies Bench;
