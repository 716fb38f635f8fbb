/**
 * bench cr: malleable MPI programs by checkpoint and restart (libebb, docs/adaptation.md §12).
 * - ebb_probe_adapt() with nothing pending in a C rank ebb runs elastic: ns per call (goal <= 50),
 *   against a call that only stores its argument;
 * - a resize of examples/c/jacobi.c holding 64 MiB of state (n = 2896), 2 -> 4 nodes and back:
 *   the adaptation's time (realloc to commit) against a cold start of the program at the new size
 *   (`ebb run -N 4 jacobi --iters 0`) plus writing and reading 64 MiB once at this machine's
 *   /dev/shm bandwidth, measured here (goal <= 1.5x);
 * - the simulator on lublin_256 and hpc2n_excerpt with 50 % malleable jobs whose resizes cost what
 *   the grow measured (and 100 times that): ebb mean turnaround / EASY <= 1.0 at every point.
 * Quick mode: one load per trace, its first 1,500 jobs, seed 1.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { runSeedsOnThreads } from "../src/sim/threads.ts";
import { parseSwf, traceJobs } from "../src/sim/swf.ts";
import { clusterApi, resizeAndWait, startBenchCluster } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const MAIN = new URL("../src/main.ts", import.meta.url).pathname;
const N = 2896; // 2896^2 doubles: 64 MiB

async function run(argv: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(argv, { env, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  return { code: await p.exited, out };
}

/** Bytes per second writing and reading a 64 MiB file in /dev/shm (best of 3 each). */
function shmBandwidth(): { write: number; read: number } {
  const path = `/dev/shm/ebb-bench-bw-${process.pid}`;
  const data = new Uint8Array(N * N * 8).fill(7);
  let write = 0;
  let read = 0;
  try {
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      writeFileSync(path, data);
      const t1 = performance.now();
      readFileSync(path);
      const t2 = performance.now();
      write = Math.max(write, data.length / ((t1 - t0) / 1000));
      read = Math.max(read, data.length / ((t2 - t1) / 1000));
    }
  } finally {
    rmSync(path, { force: true });
  }
  return { write, read };
}

const bench: Bench = {
  name: "cr",
  description: "checkpoint-restart: C probe cost, a 64 MiB Jacobi resize against a cold start + state I/O, simulated ebb/EASY with those costs",
  async run({ quick }) {
    const work = mkdtempSync(join(tmpdir(), "ebb-bench-cr-"));
    const env = { ...(process.env as Record<string, string>), EBB_CACHE_DIR: join(work, "cache") };
    const figures: Figure[] = [];
    const cluster = await startBenchCluster(4);
    try {
      for (const [name, src] of [["probe", new URL("programs/cr-probe.c", import.meta.url).pathname], ["jacobi", new URL("../examples/c/jacobi.c", import.meta.url).pathname]] as const) {
        const b = await run([process.execPath, MAIN, "mpicc", "-O2", "-o", join(work, name), src], env);
        if (b.code !== 0) throw new Error(`ebb mpicc ${name} failed`);
      }
      const cenv = { ...cluster.env, EBB_CACHE_DIR: env.EBB_CACHE_DIR! };
      const ebb = (args: string[]) => [process.execPath, MAIN, ...args];

      // 1. The probe.
      const p = await run(ebb(["run", "-n", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "1", join(work, "probe"), quick ? "2000000" : "20000000"]), cenv);
      const m = /elastic=1 pending=0 probe_ns=([\d.]+) call_ns=([\d.]+)/.exec(p.out);
      if (p.code !== 0 || !m) throw new Error(`probe program failed: ${p.out}`);
      const probe = Number(m[1]);
      figures.push({ name: "ebb_probe_adapt() in C, nothing pending", value: probe, unit: "ns", baseline: { name: "a call storing its argument", value: Number(m[2]) }, better: "lower", goal: "<= 50 ns", met: probe <= 50 });

      // 2. A resize of Jacobi with 64 MiB of state, against a cold start at the new size + the state's I/O.
      const bw = shmBandwidth();
      const io = (N * N * 8) / bw.write + (N * N * 8) / bw.read;
      const trials = quick ? 1 : 3;
      const colds: number[] = [];
      for (let i = 0; i < trials; i++) {
        const t0 = performance.now();
        const r = await run(ebb(["run", "-N", "4", join(work, "jacobi"), "--n", String(N), "--iters", "0"]), cenv);
        if (r.code !== 0) throw new Error(`cold start failed: ${r.out}`);
        colds.push((performance.now() - t0) / 1000);
      }
      const cold = median(colds);
      const job = Bun.spawn(ebb(["run", "-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", join(work, "jacobi"), "--n", String(N), "--iters", "1000000", "--every", "1"]), { env: cenv, stdout: "pipe", stderr: "inherit" });
      const reader = job.stdout.getReader();
      for (let seen = ""; !seen.includes("iteration 2 on 2 ranks"); ) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`jacobi ended early: ${seen}`);
        seen += new TextDecoder().decode(value);
      }
      void (async () => {
        while (!(await reader.read()).done) {}
      })();
      const api = clusterApi(cluster);
      const jobs = (await api("GET", "/v1/jobs?state=RUNNING")).jobs;
      const id = jobs[jobs.length - 1].id as number;
      const resize = (nodes: number) => resizeAndWait(api, id, nodes);
      const grows: Array<Record<string, number>> = [];
      const shrinks: Array<Record<string, number>> = [];
      for (let i = 0; i < trials; i++) {
        grows.push(await resize(4));
        await Bun.sleep(1000);
        shrinks.push(await resize(2));
        await Bun.sleep(1000);
      }
      job.kill("SIGINT");
      await job.exited;
      const took = (t: Record<string, number>) => (t.committed! - t.realloc!) / 1000;
      // The median trial of each direction (by its total).
      const mid = (ts: Array<Record<string, number>>) => [...ts].sort((a, b) => took(a) - took(b))[Math.floor(ts.length / 2)]!;
      const grow = mid(grows);
      const shrink = mid(shrinks);
      const phases = (t: Record<string, number>) => `write ${t.written! - t.agreed!} ms, restart ${t.spawned! - t.written!} ms, read ${t.ready! - t.spawned!} ms`;
      const base = cold + io;
      figures.push({
        name: `resize 2 -> 4 nodes, Jacobi with 64 MiB, median of ${trials} (${phases(grow)})`,
        value: took(grow),
        unit: "s",
        baseline: { name: `cold start at 4 nodes ${cold.toFixed(2)} s (median) + 64 MiB written and read at ${(bw.write / 1e9).toFixed(1)}/${(bw.read / 1e9).toFixed(1)} GB/s`, value: base },
        better: "lower",
        goal: "<= 1.5x",
        met: took(grow) <= 1.5 * base,
      });
      figures.push({ name: `resize 4 -> 2 nodes (${phases(shrink)})`, value: took(shrink), unit: "s", baseline: { name: "the same baseline", value: base }, better: "lower", goal: "<= 1.5x", met: took(shrink) <= 1.5 * base });

      // 3. The simulator, malleable jobs' resizes costing what the grow measured (and 100 times that).
      for (const factor of [1, 100]) {
        const cost = { fixed: took(grow) * factor, perNode: 0 };
        let worst = { ratio: 0, at: "" };
        for (const g of [
          { file: "lublin_256.swf", nodes: 256, scales: [1, 1.5, 3] },
          { file: "hpc2n_excerpt.swf", nodes: 240, scales: [1, 0.7, 0.5] },
        ]) {
          const all = traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${g.file}`, import.meta.url), "utf8"))).jobs;
          const trace = quick ? all.slice(0, 1500) : all;
          for (const scale of quick ? [g.scales[0]!] : g.scales) {
            const r = await runSeedsOnThreads({ trace, workload: { nodes: g.nodes, coresPerNode: 1, malleable: 0.5, arrivalScale: scale, cost }, seeds: quick ? [1] : [1, 2, 3], policies: ["easy", "ebb"], check: false }, availableParallelism());
            const by = new Map(r.results.map((x) => [x.policy, x.metrics]));
            const ratio = by.get("ebb")!.meanTurnaround / by.get("easy")!.meanTurnaround;
            process.stderr.write(`  ${g.file} x${scale}, resizes ${cost.fixed.toFixed(1)} s: ebb/easy ${ratio.toFixed(3)}\n`);
            if (ratio > worst.ratio) worst = { ratio, at: `${g.file.replace(".swf", "")} x${scale}` };
          }
        }
        figures.push({ name: `worst simulated ebb mean turnaround / EASY, 50% malleable, resizes cost ${cost.fixed.toFixed(1)} s (${worst.at})`, value: worst.ratio, unit: "x", better: "lower", goal: "<= 1.0", met: worst.ratio <= 1 });
      }
      return figures;
    } finally {
      await cluster.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
};

export default bench;
