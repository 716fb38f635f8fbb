/**
 * CFG monitoring costs (src/cfg): the detector's cost per call in verification mode at CFG sizes
 * 8, 32, 128 and 1,024 (a loop over that many call sites, detected, then run), against an empty
 * loop over the same site array in the same run; the node-local reduction of 8 ranks x 1,024
 * entries; the distributed merge of 8 node CFGs.
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
    const m = /step_ns=([\d.]+) empty_ns=([\d.]+)/.exec(await run([det, String(size), quick ? "2000000" : "20000000"]))!;
    const v = Number(m[1]);
    figures.push({ name: `C detector step, verification mode, CFG of ${size}`, value: v, unit: "ns", baseline: { name: "empty loop over the sites", value: Number(m[2]) }, better: "lower", goal: "<= 50 ns", met: v <= 50 });
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

function perCall(size: number, calls: number): { detector: number; empty: number } {
  const sites = sitesOf(size);
  const d = new Detector({ capacity: Math.max(4096, size * 2), interval: 1e18 });
  // Warm up: detect the loop, fill the successor caches.
  let t = 0;
  for (let i = 0; i < size * 4; i++) d.step(sites[i % size]!, i & 1 ? OpType.P2p : OpType.Collective, (t += 10), t + 5);
  const runs: number[] = [];
  const base: number[] = [];
  let sink = 0;
  for (let r = 0; r < 7; r++) {
    let t0 = Bun.nanoseconds();
    for (let i = 0; i < calls; i++) {
      const s = sites[i % size]!;
      t += 10;
      d.step(s, OpType.P2p, t, t + 5);
    }
    runs.push((Bun.nanoseconds() - t0) / calls);
    t0 = Bun.nanoseconds();
    for (let i = 0; i < calls; i++) {
      const s = sites[i % size]!;
      t += 10;
      sink += s + t;
    }
    base.push((Bun.nanoseconds() - t0) / calls);
  }
  if (sink === -1) console.log(sink);
  return { detector: median(runs), empty: median(base) };
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
    const calls = quick ? 200_000 : 2_000_000;
    const figures: Figure[] = [];
    for (const size of [8, 32, 128, 1024]) {
      const { detector, empty } = perCall(size, calls);
      figures.push({
        name: `detector step, verification mode, CFG of ${size}`,
        value: detector,
        unit: "ns",
        baseline: { name: "empty loop over the sites", value: empty },
        better: "lower",
        goal: "<= 50 ns",
        met: detector <= 50,
      });
    }
    const tables = rankTables(8, 1024);
    const reduce: number[] = [];
    for (let i = 0; i < (quick ? 20 : 200); i++) {
      const t0 = Bun.nanoseconds();
      reduceNode(tables);
      reduce.push((Bun.nanoseconds() - t0) / 1e6);
    }
    const nodeCfgs = Array.from({ length: 8 }, (_, n) => reduceNode(tables.map((t) => ({ ...t, rank: t.rank + 8 * n }))));
    const merge: number[] = [];
    for (let i = 0; i < (quick ? 20 : 200); i++) {
      const t0 = Bun.nanoseconds();
      mergeCfg(nodeCfgs);
      merge.push((Bun.nanoseconds() - t0) / 1e6);
    }
    const one = median(reduce);
    figures.push({ name: "node-local reduction, 8 ranks x 1,024 entries", value: one, unit: "ms", better: "lower", goal: "< 1 ms", met: one < 1 });
    const m = median(merge);
    figures.push({ name: "distributed merge of 8 node CFGs (64 ranks)", value: m, unit: "ms", better: "lower", goal: "< 10 ms", met: m < 10 });
    figures.push(...(await cFigures(quick)));
    return figures;
  },
} satisfies Bench;
