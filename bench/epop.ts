/**
 * EPOP and the redistribution helpers, against their baselines in the same run:
 * - driver overhead per elastic iteration (runEpop: probe, phase dispatch, loop condition) against
 *   a hand-written probeAdapt loop over ebb/comm, both at 1 ms iterations (spin + 8-byte
 *   allreduce) on 2 ranks; goal <= 1.05x;
 * - moving 256 MiB (--quick: 32 MiB) of block rows 4 -> 8 -> 4 ranks directly between owners
 *   (redistribute, contention-free rounds) against the root funnel the dissertation's case
 *   studies used (everything to rank 0, then out); goal <= 0.5x.
 * - a Cannon adaptation 4 -> 9 -> 16 ranks (examples/epop/cannon.ts, --sizes square), one rank
 *   per node on 16 agents on loopback (one `ebb up` process): the controller's request to the
 *   commit, which covers spawning the joiners, the 2-D block redistribution of A, B and C
 *   straight between owners and the commit; against a fresh start of the same Cannon at the new
 *   size (start, set up its blocks, one iteration, end), what a rigid system pays instead.
 * Medians of interleaved repetitions. The driver and move figures run all ranks on one node (8
 * ranks on this machine's cores), so they are Unix-socket copies, not network transfers.
 */
import { clusterApi, collectStdout, resizeAndWait, runCommand, startBenchCluster } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const PROGRAM = new URL("programs/epop.ts", import.meta.url).pathname;
const CANNON = new URL("../examples/epop/cannon.ts", import.meta.url).pathname;

export default {
  name: "epop",
  description: "EPOP driver overhead per iteration; redistribution 4->8->4 vs root funnel; Cannon adaptation 4->9->16 vs a fresh start",
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
      figures.push(...(await cannonAdaptation(quick)));
      return figures;
    } finally {
      await cluster.stop();
    }
  },
} satisfies Bench;

/** Cannon resized 4 -> 9 -> 16 on 16 one-CPU agents, against fresh starts at 9 and 16. */
export async function cannonAdaptation(quick: boolean): Promise<Figure[]> {
  // 16 agents in one `ebb up` process on two cores: a long heartbeat, or the ranks' start-up
  // starves it into declaring the nodes down.
  const cluster = await startBenchCluster(16, { cpusPerNode: 1, heartbeat: 10 });
  const api = clusterApi(cluster);
  const n = quick ? 144 : 288;
  const cannon = (nodes: number, extra: string[], iters: number) => [...cluster.ebb, "run", "-N", String(nodes), ...extra, "--", process.execPath, CANNON, "--n", String(n), "--iters", String(iters), "--check", "0"];
  try {
    const fresh: Record<number, number[]> = { 9: [], 16: [] };
    const adapt: Record<number, number[]> = { 9: [], 16: [] };
    for (let k = 0; k < (quick ? 1 : 3); k++) {
      for (const to of [9, 16]) fresh[to]!.push((await runCommand(cannon(to, [], 1), cluster.env)).ms);
      const run = Bun.spawn(cannon(4, ["--elastic", "--min-nodes", "1", "--max-nodes", "16", "--sizes", "square"], 1_000_000), { env: cluster.env, stdout: "pipe", stderr: "inherit" });
      const stdout = collectStdout(run.stdout);
      for (let i = 0; !/cannon: started/.test(stdout.text()); i++) {
        if (i > 6000) throw new Error(`cannon did not start: ${stdout.text()}`);
        await Bun.sleep(20);
      }
      const job = (await api("GET", "/v1/jobs?state=RUNNING")).jobs[0].id as number;
      for (const to of [9, 16]) {
        const times = await resizeAndWait(api, job, to, 20);
        adapt[to]!.push(times.committed! - times.requested!);
      }
      await api("DELETE", `/v1/jobs/${job}`);
      await run.exited;
      await stdout.done;
    }
    return [9, 16].map((to): Figure => {
      const a = median(adapt[to]!);
      const f = median(fresh[to]!);
      return { name: `Cannon n=${n} adaptation ${to === 9 ? 4 : 9} -> ${to} ranks (1 per node, 16 agents), request to commit`, value: a, unit: "ms", baseline: { name: `fresh start of the same Cannon at ${to} ranks (start, blocks, 1 iteration, end)`, value: f }, better: "lower" };
    });
  } finally {
    await cluster.stop();
  }
}
