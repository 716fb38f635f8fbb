/**
 * CFG monitoring costs (src/cfg): the detector's cost per call in verification mode at CFG sizes
 * 8, 32, 128 and 1,024 (a loop over that many call sites, detected, then run), against an empty
 * loop over the same site array in the same run; the node-local reduction of 8 ranks x 1,024
 * entries; the distributed merge of 8 node CFGs.
 *
 * Costs are CPU time of the measuring thread (process.threadCpuUsage, CLOCK_PROCESS_CPUTIME_ID in C): on a
 * shared machine many times over its cores, wall time mostly counts the time spent waiting for a
 * core. The wall-time figures are printed beside them (no goal).
 */
import { Detector } from "../src/cfg/detector.ts";
import { mergeCfg } from "../src/cfg/merge.ts";
import { reduceNode, type RankCfg } from "../src/cfg/node.ts";
import { OpType } from "../src/cfg/types.ts";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileC } from "../test/support/mpi.ts";
import { median, type Bench, type Figure } from "./lib.ts";

async function run(argv: string[], env: Record<string, string> = {}): Promise<string> {
  const p = Bun.spawn(argv, { env: { ...(process.env as Record<string, string>), ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  if ((await p.exited) !== 0) throw new Error(`${argv.join(" ")} failed: ${err}`);
  return out;
}

/** The C library's detector per call, and an OSU-style ping-pong with and without the library. */
async function cFigures(quick: boolean): Promise<Figure[]> {
  const figures: Figure[] = [];
  const src = new URL("programs/", import.meta.url).pathname;
  const det = await compileC("bench-cfg-detector", readFileSync(join(src, "cfg-detector.c"), "utf8").replace('"../../src/cfg/c/ebbcfg.c"', JSON.stringify(new URL("../src/cfg/c/ebbcfg.c", import.meta.url).pathname)), { flags: ["-O2", "-ldl"] });
  if (!det) throw new Error("mpicc is needed for the C figures");
  for (const size of [8, 32, 128, 1024]) {
    const m = /step_ns=([\d.]+) empty_ns=([\d.]+) step_cpu_ns=([\d.]+) empty_cpu_ns=([\d.]+)/.exec(await run([det, String(size), quick ? "2000000" : "20000000"]))!;
    const v = Number(m[3]);
    figures.push({ name: `C detector step, verification mode, CFG of ${size} (CPU time)`, value: v, unit: "ns", baseline: { name: "empty loop over the sites", value: Number(m[4]) }, better: "lower", goal: "<= 50 ns", met: v <= 50 });
    figures.push({ name: `C detector step, CFG of ${size} (wall time)`, value: Number(m[1]), unit: "ns", baseline: { name: "empty loop over the sites", value: Number(m[2]) }, better: "lower" });
  }
  const dir = mkdtempSync(join(tmpdir(), "ebb-bench-cfg-"));
  try {
    const lib = join(dir, "libebbcfg.so");
    await run(["mpicc", "-O2", "-shared", "-fPIC", "-o", lib, new URL("../src/cfg/c/ebbcfg.c", import.meta.url).pathname, "-ldl"]);
    const pp = await compileC("bench-cfg-pingpong", readFileSync(join(src, "cfg-pingpong.c"), "utf8"), { flags: ["-O2"] });
    if (!pp || !Bun.which("mpiexec")) throw new Error("mpicc and mpiexec are needed for the ping-pong");
    const parse = (out: string) => Object.fromEntries([...out.matchAll(/bytes=(\d+) us=([\d.]+)/g)].map((m) => [m[1]!, Number(m[2])]));
    const plain: Record<string, number>[] = [];
    const monitored: Record<string, number>[] = [];
    // Interleaved, so both see the same machine; medians of the runs.
    for (let i = 0; i < (quick ? 2 : 5); i++) {
      plain.push(parse(await run(["mpiexec", "-n", "2", pp])));
      monitored.push(parse(await run(["mpiexec", "-n", "2", "-genv", "LD_PRELOAD", lib, "-genv", "EBB_CFG_FILE", join(dir, "rank.json"), pp])));
    }
    for (const [bytes, goal] of [["16", 1.1], ["1048576", 1.02]] as const) {
      const base = median(plain.map((p) => p[bytes]!));
      const v = median(monitored.map((p) => p[bytes]!));
      figures.push({ name: `MPICH ping-pong ${bytes === "16" ? "16 B" : "1 MiB"}, one-way, with the CFG library`, value: v, unit: "us", baseline: { name: "without", value: base }, better: "lower", goal: `<= ${goal}x`, met: v / base <= goal });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

function sitesOf(size: number): Float64Array {
  // Site ids as the comm layer makes them: 32-bit hashes.
  const s = new Float64Array(size);
  for (let i = 0; i < size; i++) s[i] = (Math.imul(i + 1, 0x9e3779b1) >>> 0) + 1;
  return s;
}

/** CPU time of this thread so far, ns (the process's where threadCpuUsage is missing: it also counts the GC's and the JIT's threads). */
const threadCpu = (process as unknown as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
function cpuNs(): number {
  const u = threadCpu ? threadCpu.call(process) : process.cpuUsage();
  return (u.user + u.system) * 1000;
}

function perCall(size: number, calls: number): { detector: number; empty: number; detectorWall: number; emptyWall: number } {
  const sites = sitesOf(size);
  const d = new Detector({ capacity: Math.max(4096, size * 2), interval: 1e18 });
  // Warm up: detect the loop, fill the successor caches.
  let t = 0;
  for (let i = 0; i < size * 4; i++) d.step(sites[i % size]!, i & 1 ? OpType.P2p : OpType.Collective, (t += 10), t + 5);
  const runs: number[] = [];
  const base: number[] = [];
  const runsWall: number[] = [];
  const baseWall: number[] = [];
  let sink = 0;
  // Alternating runs of the two loops, medians.
  for (let r = 0; r < 11; r++) {
    let c0 = cpuNs();
    let t0 = Bun.nanoseconds();
    for (let i = 0; i < calls; i++) {
      const s = sites[i % size]!;
      t += 10;
      d.step(s, OpType.P2p, t, t + 5);
    }
    runsWall.push((Bun.nanoseconds() - t0) / calls);
    runs.push((cpuNs() - c0) / calls);
    c0 = cpuNs();
    t0 = Bun.nanoseconds();
    for (let i = 0; i < calls; i++) {
      const s = sites[i % size]!;
      t += 10;
      sink += s + t;
    }
    baseWall.push((Bun.nanoseconds() - t0) / calls);
    base.push((cpuNs() - c0) / calls);
  }
  if (sink === -1) console.log(sink);
  return { detector: median(runs), empty: median(base), detectorWall: median(runsWall), emptyWall: median(baseWall) };
}

function rankTables(ranks: number, entries: number): RankCfg[] {
  const out: RankCfg[] = [];
  for (let r = 0; r < ranks; r++) {
    const d = new Detector({ capacity: entries + 1, interval: 1e18 });
    const sites = sitesOf(entries);
    let t = 0;
    // 16 loops of entries/16 sites each, run 3 times.
    const per = entries / 16;
    for (let l = 0; l < 16; l++) {
      for (let k = 0; k < 3 * per; k++) {
        const s = sites[l * per + (k % per)]!;
        d.step(s, (s % 3 === 0 ? OpType.Collective : OpType.P2p) as OpType, (t += 10), t + 3);
      }
    }
    out.push({ rank: r, rows: d.table() });
  }
  return out;
}

export default {
  name: "cfg",
  description: "CFG detector ns per call by CFG size; node-local reduction and distributed merge",
  async run({ quick }) {
    const calls = quick ? 1_000_000 : 4_000_000;
    const figures: Figure[] = [];
    for (const size of [8, 32, 128, 1024]) {
      const { detector, empty, detectorWall, emptyWall } = perCall(size, calls);
      figures.push({
        name: `detector step, verification mode, CFG of ${size} (CPU time)`,
        value: detector,
        unit: "ns",
        baseline: { name: "empty loop over the sites", value: empty },
        better: "lower",
        goal: "<= 50 ns",
        met: detector <= 50,
      });
      figures.push({ name: `detector step, CFG of ${size} (wall time)`, value: detectorWall, unit: "ns", baseline: { name: "empty loop over the sites", value: emptyWall }, better: "lower" });
    }
    const tables = rankTables(8, 1024);
    // Warm: the agent reduces every sampling interval, the JIT has compiled it by then.
    for (let i = 0; i < 100; i++) reduceNode(tables);
    const reduce: number[] = [];
    const reduceWall: number[] = [];
    // Batches of 10 (thread CPU time may advance in scheduler ticks), medians over the batches.
    for (let i = 0; i < (quick ? 30 : 200); i++) {
      const c0 = cpuNs();
      const t0 = Bun.nanoseconds();
      for (let k = 0; k < 10; k++) reduceNode(tables);
      reduceWall.push((Bun.nanoseconds() - t0) / 1e7);
      reduce.push((cpuNs() - c0) / 1e7);
    }
    const nodeCfgs = Array.from({ length: 8 }, (_, n) => reduceNode(tables.map((t) => ({ ...t, rank: t.rank + 8 * n }))));
    const merge: number[] = [];
    const mergeWall: number[] = [];
    for (let i = 0; i < (quick ? 10 : 40); i++) {
      const c0 = cpuNs();
      const t0 = Bun.nanoseconds();
      for (let k = 0; k < 200; k++) mergeCfg(nodeCfgs);
      mergeWall.push((Bun.nanoseconds() - t0) / 2e8);
      merge.push((cpuNs() - c0) / 2e8);
    }
    const one = median(reduce);
    figures.push({ name: "node-local reduction, 8 ranks x 1,024 entries (CPU time)", value: one, unit: "ms", better: "lower", goal: "< 1 ms", met: one < 1 });
    figures.push({ name: "node-local reduction, 8 ranks x 1,024 entries (wall time)", value: median(reduceWall), unit: "ms", better: "lower" });
    const m = median(merge);
    figures.push({ name: "distributed merge of 8 node CFGs (64 ranks, CPU time)", value: m, unit: "ms", better: "lower", goal: "< 10 ms", met: m < 10 });
    figures.push({ name: "distributed merge of 8 node CFGs (wall time)", value: median(mergeWall), unit: "ms", better: "lower" });
    if (!process.env.EBB_BENCH_CFG_NO_C) figures.push(...(await cFigures(quick)));
    return figures;
  },
} satisfies Bench;
