/**
 * Where a replay's CPU goes, by phase of a pass (issue 35): `bun bench/_sim-phases.ts [BASE] [POLICY...]`
 * replays bench sim-speed's 4,096-node trace (lublin's first BASE jobs ×16, default 1,000; 50 %
 * malleable, seed 1, --check) once per policy (default `ebb easy`), each in its own process under
 * `bun --cpu-prof` (a sample every 250 µs), and prints each phase's share of the samples and
 * that share of the replay's CPU time per pass (µs).
 * A sample counts for the phase of the outermost phase function on its stack (below `simulate`), so
 * the phases do not overlap: `cands` called by a rule counts as candidates, a `planAdmit` inside
 * `admitBackfill` as the backfill admit (but the running views inside the snapshot count apart).
 * The profile is of the main thread only (not the JIT's and collector's threads, which the process's
 * CPU time holds), and of the first replay in the process (the JIT's tiers included). Not a
 * benchmark (run.ts skips files named _*).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Phase of each function (by name), checked from the root of the stack down: the outermost wins. */
const PHASES: readonly (readonly [string, readonly string[]])[] = [
  ["events: arrivals, ends, commits", ["handleEvent"]],
  ["events: tick samples", ["sampleOnTick"]],
  ["snapshot: idle list, queue", ["snapshot"]],
  ["snapshot: running views", ["runningView"]],
  ["re-check (checkPlan)", ["checkPlan"]],
  ["apply + --check record", ["applyPlan", "record"]],
  ["ebb: start sizes", ["startSizeWhileWaiting", "efficiencyPrior", "sizedView", "growStarts"]],
  ["EASY passes (queue order, backfill)", ["easyPass", "planRigid", "planBatchCounts"]],
  ["ebb: queue figures, first waiting", ["queueFigures", "firstWaiting", "queue"]],
  ["ebb: start room, moldable starts", ["startRoom", "moldable", "loansForHead"]],
  ["ebb: candidates (running jobs priced)", ["candidates", "candidate"]],
  ["ebb: admit for the head", ["planAdmit", "GiveOrder", "shrinksCommit", "incomingNodes"]],
  ["ebb: backfill admit", ["admitBackfill"]],
  ["ebb: priced shrinks", ["planPriceShrinks"]],
  ["ebb: arrival reserve, lend", ["arrivalReserve", "planLend", "reclaim", "queueWasReal"]],
  ["limits guard, sizes, names", ["guardLimits", "nameStarts", "nameResize", "freeNames", "sizedInput", "sizedPlan"]],
];
const OTHER = "the replay loop, other";
const SNAPSHOT = "snapshot: idle list, queue";
/** µs between samples. */
const INTERVAL = 250;
const phaseOf = new Map<string, string>(PHASES.flatMap(([phase, fns]) => fns.map((f) => [f, phase] as const)));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string };
  children?: number[];
}

/** Samples by phase, of those under `simulate` (the rest: loading, building the workload). */
function phases(file: string): { total: number; inPass: number; by: Map<string, number> } {
  const p = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[] };
  const parent = new Map<number, number>();
  const name = new Map<number, string>();
  for (const n of p.nodes) {
    name.set(n.id, n.callFrame.functionName);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Each node's phase, from its stack (memoized per node).
  const memo = new Map<number, string | null>();
  const phaseAt = (id: number): string | null => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const outer = up === undefined ? null : phaseAt(up);
    const fn = name.get(id)!;
    // Outside the replay's loop: null; inside, the outermost phase function's phase, else "other".
    // (The running views are told apart inside the snapshot.)
    const here = outer === null ? (fn === "simulate" ? OTHER : null) : outer === OTHER || (outer === SNAPSHOT && fn === "runningView") ? (phaseOf.get(fn) ?? outer) : outer;
    memo.set(id, here);
    return here;
  };
  const by = new Map<string, number>();
  let inPass = 0;
  for (const s of p.samples) {
    const ph = phaseAt(s);
    if (ph === null) continue;
    inPass++;
    by.set(ph, (by.get(ph) ?? 0) + 1);
  }
  return { total: p.samples.length, inPass, by };
}

if (process.argv[2] === "--replay") {
  const [, , , policy, base] = process.argv;
  const { resolveConfig } = await import("../src/sched/config.ts");
  const { simulate } = await import("../src/sim/engine.ts");
  const { widen } = await import("../src/sim/scale.ts");
  const { parseSwf, traceJobs } = await import("../src/sim/swf.ts");
  const { buildWorkload } = await import("../src/sim/workload.ts");
  const trace = traceJobs(parseSwf(readFileSync(new URL("../../shared/workloads/lublin_256.swf", import.meta.url), "utf8"))).jobs;
  const jobs = buildWorkload(widen(trace.slice(0, Number(base)), 16), { nodes: 4096, coresPerNode: 1, malleable: 0.5, seed: 1 }).jobs;
  const c0 = process.cpuUsage();
  const run = simulate(jobs, { nodes: 4096, config: resolveConfig({ policy: policy as never }), seed: 1, check: true });
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({ passes: run.passes, cpuMs: (c.user + c.system) / 1000 }));
} else {
  const base = Number(process.argv[2] ?? 1000);
  const policies = process.argv.length > 3 ? process.argv.slice(3) : ["ebb", "easy"];
  const rows = new Map<string, string[]>();
  const heads: string[] = [];
  for (const policy of policies) {
    const dir = mkdtempSync(join(tmpdir(), "sim-phases-"));
    const child = spawnSync(process.execPath, ["--cpu-prof", `--cpu-prof-interval=${INTERVAL}`, `--cpu-prof-dir=${dir}`, import.meta.path, "--replay", policy, String(base)], { encoding: "utf8" });
    if (child.status !== 0) throw new Error(`${policy}: ${child.stderr}`);
    const { passes, cpuMs } = JSON.parse(child.stdout.trim().split("\n").pop()!) as { passes: number; cpuMs: number };
    const prof = phases(join(dir, readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))!));
    rmSync(dir, { recursive: true });
    // The process's CPU time (JIT and collector threads in it) apportioned by the samples: a
    // sampler on a loaded machine misses samples, so their count alone understates the time.
    heads.push(`${policy}: ${passes} passes, ${Math.round(cpuMs)} ms CPU, ${prof.inPass} of ${prof.total} samples in the loop`);
    for (const [phase] of [...PHASES, [OTHER] as const]) {
      const n = prof.by.get(phase) ?? 0;
      if (!rows.has(phase)) rows.set(phase, []);
      rows.get(phase)!.push(`${((100 * n) / prof.inPass).toFixed(1).padStart(5)} % ${(((n / prof.inPass) * cpuMs * 1000) / passes).toFixed(1).padStart(6)} µs/pass`);
    }
  }
  console.log(heads.join("\n"));
  console.log(`${"phase".padEnd(40)}${policies.map((p) => p.padEnd(24)).join("")}`);
  for (const [phase, cells] of rows) console.log(`${phase.padEnd(40)}${cells.map((c) => c.padEnd(24)).join("")}`);
}
