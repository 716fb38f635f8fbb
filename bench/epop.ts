/**
 * EPOP and the redistribution helpers, against their baselines in the same run:
 * - driver overhead per elastic iteration (runEpop: probe, phase dispatch, loop condition) against
 *   a hand-written probeAdapt loop over ebb/comm, both at 1 ms iterations (spin + 8-byte
 *   allreduce) on 2 ranks; goal <= 1.05x;
 * - moving 256 MiB (--quick: 32 MiB) of block rows 4 -> 8 -> 4 ranks directly between owners
 *   (redistribute, contention-free rounds) against the root funnel the dissertation's case
 *   studies used (everything to rank 0, then out); goal <= 0.5x.
 * Medians of interleaved repetitions. All ranks on one node (8 ranks on this machine's cores), so
 * the move figures are Unix-socket copies, not network transfers.
 */
import { runCommand, startBenchCluster } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const PROGRAM = new URL("programs/epop.ts", import.meta.url).pathname;

export default {
  name: "epop",
  description: "EPOP driver overhead per iteration; redistribution 4->8->4 vs root funnel",
  async run({ quick }) {
    const cluster = await startBenchCluster(1, { cpusPerNode: 8 });
    const run = async (ranks: number, args: string[]) => (await runCommand([...cluster.ebb, "run", "-N", "1", "-n", String(ranks), "--", process.execPath, PROGRAM, ...args], cluster.env)).out;
    const value = (out: string, key: string) => Number(new RegExp(`^${key}=([\\d.]+)`, "m").exec(out)?.[1]);
    try {
      const iters = quick ? 500 : 2000;
      const driver: number[] = [];
      const hand: number[] = [];
      for (let k = 0; k < (quick ? 3 : 5); k++) {
        hand.push(value(await run(2, ["hand", String(iters), "1000"]), "hand") / iters);
        driver.push(value(await run(2, ["driver", String(iters), "1000"]), "driver") / iters);
      }
      const mib = quick ? 32 : 256;
      const out = await run(8, ["move", String(mib), quick ? "2" : "3"]);
      const list = (key: string) => (new RegExp(`^${key}=([\\d.,]+)`, "m").exec(out)?.[1] ?? "").split(",").map(Number);
      const direct = median(list("direct"));
      const funnel = median(list("funnel"));
      const d = median(driver);
      const h = median(hand);
      const figures: Figure[] = [
        { name: "time per elastic iteration (1 ms of work), 2 ranks, runEpop", value: d * 1000, unit: "us", baseline: { name: "hand-written probeAdapt loop", value: h * 1000 }, better: "lower", goal: "<= 1.05x", met: d / h <= 1.05 },
        { name: `move ${mib} MiB 4 -> 8 -> 4 ranks, direct (redistribute)`, value: direct, unit: "ms", baseline: { name: "root funnel (gather to rank 0, send out)", value: funnel }, better: "lower", goal: "<= 0.5x", met: direct / funnel <= 0.5 },
      ];
      return figures;
    } finally {
      await cluster.stop();
    }
  },
} satisfies Bench;
