/**
 * Resizing a running elastic job, 1 rank per node: 2 -> 4 -> 8 -> 4 -> 2. For each resize, how
 * long the preexisting ranks were blocked (probe that said pending + adaptBegin + adaptCommit, as
 * rank 0 measures it) and decision to commit (the controller's request to the launcher's commit).
 * Baseline, same run: what a rigid system pays instead, relaunching the program at the new size
 * (start, wire up, first barrier). The cycle runs five times in one job (once with --quick); each
 * figure is the median of its resize's rounds. Then 4 -> 8 with the joining ranks warm (the
 * agents' pre-started processes, `ebb exec`) against cold, in turn (warmVersusCold).
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterApi, collectStdout, resizeAndWait, startBenchCluster, type Api } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const PROGRAM = new URL("programs/adapt.ts", import.meta.url).pathname;
const COMM = new URL("../src/comm/index.ts", import.meta.url).pathname;

/**
 * 4 -> 8, decision to commit, the joining ranks warm or cold (the agents' --warm-ranks 1):
 * in the same cluster, a job per trial, the three kinds in turn each round (order rotated):
 * `ebb exec PROGRAM` (warm ranks), `bun PROGRAM` (cold, the figure of the cycle above), and
 * `env ebb exec PROGRAM` (cold: the same program and loader, argv[0] not ebb, plus env's exec).
 * Each job starts at 4 nodes and waits 3 s, so that the pools its first ranks took from have
 * refilled and the node is quiet; the joining ranks' nodes have kept theirs.
 */
async function warmVersusCold(rounds: number, ebb: (args: string[]) => Bun.Subprocess<"ignore", "pipe", "inherit">, api: Api, stop: string): Promise<Figure[]> {
  const kinds = {
    warm: ["ebb", "exec", PROGRAM, stop],
    "cold bun": [process.execPath, PROGRAM, stop],
    "cold ebb exec": ["/usr/bin/env", "ebb", "exec", PROGRAM, stop],
  };
  const decided: Record<keyof typeof kinds, number[]> = { warm: [], "cold bun": [], "cold ebb exec": [] };
  const names = Object.keys(kinds) as (keyof typeof kinds)[];
  for (let round = 0; round < Math.max(3, rounds * 2); round++) {
    for (let i = 0; i < names.length; i++) {
      const kind = names[(i + round) % names.length]!;
      rmSync(stop, { force: true });
      const run = ebb(["run", "-N", "4", "--elastic", "--min-nodes", "1", "--max-nodes", "8", "--", ...kinds[kind]]);
      const stdout = collectStdout(run.stdout);
      while (!/ready rank=3/.test(stdout.text())) await Bun.sleep(20);
      await Bun.sleep(3000);
      const job = (await api("GET", "/v1/jobs?state=RUNNING")).jobs[0].id as number;
      const times = await resizeAndWait(api, job, 8, 100);
      decided[kind].push(times.committed! - times.requested!);
      const steps = Object.entries(times).sort((x, y) => x[1] - y[1]);
      console.error(`  4 -> 8, ${kind}: ${steps.map(([k, t]) => `${k} +${t - times.requested!}`).join(", ")} ms`);
      writeFileSync(stop, "");
      await run.exited;
      await stdout.done;
      await Bun.sleep(500);
    }
  }
  const warm = median(decided.warm);
  const coldBun = { name: "cold ranks (bun PROGRAM)", value: median(decided["cold bun"]) };
  const coldExec = { name: "cold ranks (env ebb exec PROGRAM)", value: median(decided["cold ebb exec"]) };
  return [
    { name: "4 -> 8: decision to commit, joining ranks warm (ebb exec PROGRAM)", value: warm, unit: "ms", baseline: coldBun, better: "lower", goal: "<= 100 ms", met: warm <= 100 },
    { name: "4 -> 8: decision to commit, joining ranks warm (ebb exec PROGRAM), against the same program started cold", value: warm, unit: "ms", baseline: coldExec, better: "lower" },
  ];
}

export default {
  name: "adapt",
  description: "blocked time and decision-to-commit per resize, 2->4->8->4->2 ranks",
  async run({ quick }) {
    const rounds = quick ? 1 : 5;
    // One warm rank per agent: only the warm-vs-cold trials use them (their ranks run `ebb exec`).
    const cluster = await startBenchCluster(8, { cpusPerNode: 1, warmRanks: 1 });
    const api = clusterApi(cluster);
    const stop = join(cluster.dir, "stop");
    const ebb = (args: string[]) => Bun.spawn([...cluster.ebb, ...args], { env: cluster.env, stdout: "pipe", stderr: "inherit" });
    try {
      const relaunch: Record<number, number> = {};
      for (const n of [2, 4, 8]) {
        const times: number[] = [];
        for (let k = 0; k < 3; k++) {
          writeFileSync(stop, "");
          const t0 = performance.now();
          const p = ebb(["run", "-N", String(n), "--elastic", "--min-nodes", "1", "--max-nodes", "8", "--", process.execPath, PROGRAM, stop]);
          await p.exited;
          times.push(performance.now() - t0);
        }
        relaunch[n] = median(times);
      }
      // What a grow cannot beat on this machine: its joining processes starting at once, each
      // loading ebb/comm, while the job's ranks run (all "nodes" share this machine's two cores;
      // on a real cluster each joining rank has a node of its own). Measured just before the grow.
      const bareStarts = async (k: number): Promise<number> => {
        const times: number[] = [];
        for (let i = 0; i < 3; i++) {
          const t0 = performance.now();
          await Promise.all(Array.from({ length: k }, () => Bun.spawn([process.execPath, "-e", `await import(${JSON.stringify(COMM)})`], { stdout: "ignore" }).exited));
          times.push(performance.now() - t0);
        }
        return median(times);
      };
      rmSync(stop, { force: true });
      const run = ebb(["run", "-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "8", "--", process.execPath, PROGRAM, stop]);
      const stdout = collectStdout(run.stdout);
      while (!/ready rank=1/.test(stdout.text())) await Bun.sleep(20);
      await Bun.sleep(300);
      const job = (await api("GET", "/v1/jobs?state=RUNNING")).jobs[0].id as number;
      // The cycle runs `rounds` times in the same job; each figure is the median of its resize's rounds.
      const samples = new Map<string, { from: number; to: number; blocked: number[]; decided: number[]; bare: number[] }>();
      let from = 2;
      let resizes = 0;
      for (let round = 0; round < rounds; round++) {
        for (const to of [4, 8, 4, 2]) {
          const bare = to > from ? await bareStarts(to - from) : undefined;
          if (bare !== undefined) await Bun.sleep(200); // the bare processes' exits settle before the grow
          const { adaptationId } = await api("POST", `/v1/jobs/${job}/resize`, { nodes: to });
          let a: any;
          for (;;) {
            a = (await api("GET", `/v1/jobs/${job}`)).adaptations.find((x: any) => x.id === adaptationId);
            if (a && a.state !== "ADAPTING") break;
            // As often as `ebb resize --wait` asks: the figures are the controller's own timestamps,
            // and asking every 20 ms cost the controller ~0.1 s of CPU per resize (building the job's
            // detail, then JIT-compiling that path) on the cores the joining ranks start on.
            await Bun.sleep(100);
          }
          if (a.state !== "COMMITTED") throw new Error(`resize ${from}->${to} failed: ${a.message}`);
          // Rank 0 prints after its commit; the line may reach us after the controller saw the commit.
          const reported = () => [...stdout.text().matchAll(/blocked_ms=([\d.]+) from=(\d+) to=(\d+)/g)];
          const deadline = Date.now() + 10_000;
          while (reported().length <= resizes && Date.now() < deadline) await Bun.sleep(10);
          const last = reported()[resizes++];
          if (!last || Number(last[2]) !== from || Number(last[3]) !== to) throw new Error(`rank 0 did not report the ${from} -> ${to} resize:\n${stdout.text()}`);
          const steps = Object.entries(a.times as Record<string, number>).sort((x, y) => x[1] - y[1]);
          console.error(`  ${from} -> ${to}: ${steps.map(([k, t]) => `${k} +${t - a.times.requested}`).join(", ")} ms`);
          const s = samples.get(`${from} -> ${to}`) ?? { from, to, blocked: [], decided: [], bare: [] };
          samples.set(`${from} -> ${to}`, s);
          s.blocked.push(Number(last[1]));
          s.decided.push(a.times.committed - a.times.requested);
          if (bare !== undefined) s.bare.push(bare);
          from = to;
          await Bun.sleep(200);
        }
      }
      const figures: Figure[] = [];
      for (const [resize, s] of samples) {
        const base = { name: `relaunch at ${s.to} ranks`, value: relaunch[s.to]! };
        const blocked = median(s.blocked);
        const decided = median(s.decided);
        figures.push(
          { name: `${resize}: preexisting ranks blocked`, value: blocked, unit: "ms", baseline: base, better: "lower", goal: "< 20 ms", met: blocked < 20 },
          { name: `${resize}: decision to commit`, value: decided, unit: "ms", baseline: base, better: "lower", goal: "< 300 ms", met: decided < 300 },
        );
        if (s.bare.length > 0) {
          const bare = median(s.bare);
          figures.push(
            { name: `${resize}: ${s.to - s.from} bare processes started at once beside the running ranks (bun + ebb/comm import)`, value: bare, unit: "ms", baseline: { name: "decision to commit", value: decided }, better: "lower" },
            { name: `${resize}: ebb's part (decision to commit beyond that start)`, value: median(s.decided.map((d, i) => d - s.bare[i]!)), unit: "ms", baseline: { name: "decision to commit", value: decided }, better: "lower" },
          );
        }
      }
      writeFileSync(stop, "");
      await run.exited;
      await stdout.done;
      figures.push(...(await warmVersusCold(rounds, ebb, api, stop)));
      return figures;
    } finally {
      if (!existsSync(stop)) writeFileSync(stop, "");
      await cluster.stop();
    }
  },
} satisfies Bench;
