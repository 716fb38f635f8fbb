import { readFileSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { defineCommand } from "./command.ts";
import { POLICY_TABLE } from "../sched/policies/index.ts";
import { DEFAULT_CONFIG, isPolicy, POLICIES, type ErsConfig, type PolicyName } from "../sched/config.ts";
import { DEFAULT_PRIORITY, resolvePriority, type PriorityConfig } from "../sched/priority.ts";
import { GEN_DEFAULTS, parseAvailability } from "../sim/availability.ts";
import type { SeedsRequest, SimReport, SimRequest } from "../sim/run.ts";
import { runSeedsOnThreads } from "../sim/threads.ts";
import { parseSwf, traceJobs, traceMachine } from "../sim/swf.ts";
import { WORKLOAD_DEFAULTS } from "../sim/workload.ts";
import { jitPolicy, NORMAL } from "../util/jit.ts";
import { formatDuration } from "../util/time.ts";
import { defineArgs } from "./command.ts";
import { guard, intFlag, numberFlag, printJson, table, UsageError } from "./common.ts";
import { err, isTerminal, out } from "../util/stdio.ts";
import { Progress } from "./sim-progress.ts";

const args = defineArgs({
  swf: { type: "string", description: "Workload trace in Standard Workload Format (required)", valueHint: "FILE" },
  nodes: { type: "string", description: "Nodes in the simulated cluster (default: the trace's processors, its MaxProcs header, else MaxNodes; with --cores-per-node K, its processors / K)", valueHint: "N" },
  "cores-per-node": { type: "string", description: "Cores per node, shared by jobs: a rigid job's P processors are P one-core tasks on any nodes, a malleable job takes ceil(P/K) whole nodes (default 1: whole nodes)", valueHint: "K" },
  "whole-nodes": { type: "boolean", description: "With --cores-per-node: every job takes ceil(P/K) whole nodes, none is shared" },
  malleable: { type: "string", description: "Fraction of jobs that are malleable, 0 to 1 (default 0.5)", valueHint: "F" },
  seed: { type: "string", description: "Seed choosing the malleable jobs, their speedups and sample noise (default 1)", valueHint: "S" },
  seeds: { type: "string", description: "Run several seeds and report the mean of each metric: A-B or a comma list, e.g. 1-5 (instead of --seed)", valueHint: "LIST" },
  "arrival-scale": { type: "string", description: "Multiply every submit time by X: below 1 arrivals come denser (higher load), above 1 sparser (default 1)", valueHint: "X" },
  policy: { type: "string", repeat: true, description: `Policy to run; repeat or comma-separate for several: ${POLICIES.join(", ")} (default: all)`, valueHint: "P" },
  limit: { type: "string", description: "Replay only the first N jobs of the trace", valueHint: "N" },
  interval: { type: "string", description: `Seconds between elastic passes (default ${DEFAULT_CONFIG.interval})`, valueHint: "SEC" },
  upper: { type: "string", description: `Upper MTCT threshold: above it a job is halved (default ${DEFAULT_CONFIG.upper})`, valueHint: "X" },
  lower: { type: "string", description: `Lower MTCT threshold: below it a job may double (default ${DEFAULT_CONFIG.lower})`, valueHint: "X" },
  settle: { type: "string", description: `Seconds after an adaptation before a job may adapt again (default ${DEFAULT_CONFIG.settle})`, valueHint: "SEC" },
  payoff: { type: "boolean", description: "Grow a job only if the predicted gain exceeds its adaptation cost", negativeDescription: "Grow without the payoff rule" },
  "resize-cost": { type: "string", description: `Seconds per resize: FIXED[,PERNODE] per node added or removed (default ${WORKLOAD_DEFAULTS.cost.fixed},${WORKLOAD_DEFAULTS.cost.perNode})`, valueHint: "F,P" },
  efficiency: { type: "string", description: `Parallel efficiency of a malleable job at its requested size is drawn uniformly in LO,HI (default ${WORKLOAD_DEFAULTS.efficiency.join(",")})`, valueHint: "LO,HI" },
  priority: { type: "string", description: "Queue order: submit (default), or fairshare: multifactor priority, fair share by the trace's user ids (SWF field 12) plus age, weights as the controller's defaults", valueHint: "ORDER" },
  "half-life": { type: "string", description: `With --priority fairshare: seconds in which a user's usage loses half its weight (default ${DEFAULT_PRIORITY.halfLife})`, valueHint: "SEC" },
  availability: { type: "string", description: "Replay node availability beside the workload: lines TIME NODE STATE [SPEED] (seconds from the workload's start; node number or range A-B; free, busy, overloaded or owner; the pace a job keeps on the node, 0-1, default 1 busy, 0.5 overloaded, 0.1 owner); '#' comments", valueHint: "FILE" },
  "availability-gen": { type: "boolean", description: "Generate node availability from the seed: a fraction of the nodes are workstations whose owners come and go (--workstations, --owner-every, --owner-stay, --owner-speed)" },
  workstations: { type: "string", description: `With --availability-gen: fraction of the nodes that are workstations, 0 to 1 (default ${GEN_DEFAULTS.workstations})`, valueHint: "F" },
  "owner-every": { type: "string", description: `With --availability-gen: mean seconds a workstation's owner is away (exponential; default ${GEN_DEFAULTS.ownerEvery}); owners come back only until the last job's submit`, valueHint: "SEC" },
  "owner-stay": { type: "string", description: `With --availability-gen: mean seconds an owner stays (exponential; default ${GEN_DEFAULTS.ownerStay})`, valueHint: "SEC" },
  "owner-speed": { type: "string", description: `With --availability-gen: the pace a job keeps on a node while its owner is there, 0 to 1 (default ${GEN_DEFAULTS.ownerSpeed})`, valueHint: "X" },
  check: { type: "boolean", description: "Hold every policy to EASY's promise (the first waiting job starts no later than the reservation it got when it became first); print each violation; exit 1 if a policy that claims the promise broke it" },
  json: { type: "boolean", description: "Print the metrics as JSON" },
  threads: { type: "string", description: "Replays run at once, each policy and seed on a thread of its own; the results do not depend on it (default: half the CPUs this process may use)", valueHint: "N" },
  progress: { type: "boolean", description: "Print a progress line (jobs done, events/s) to stderr now and then even when it is not a terminal (on a terminal it is always shown)" },
  "jobs-csv": { type: "string", description: "Write one row per job and policy (times, sizes, resizes) to this CSV file", valueHint: "FILE" },
});

function numPair(value: string | undefined, flag: string, min: number, max: number): [number, number] | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(",");
  if (parts.length > 2) throw new UsageError(`${flag} ${value}: expected one or two numbers separated by a comma`);
  const a = numberFlag(parts[0], flag, { min, max });
  const b = parts[1] === undefined ? undefined : numberFlag(parts[1], flag, { min, max });
  if (a === undefined) throw new UsageError(`${flag} ${value}: expected a number`);
  return [a, b ?? Number.NaN];
}

/** Every --policy given, comma lists split; all of them when none is. */
function policies(given: readonly string[]): PolicyName[] {
  const out: PolicyName[] = [];
  for (const v of given) {
    for (const p of v.split(",").map((s) => s.trim()).filter(Boolean)) {
      if (!isPolicy(p)) throw new UsageError(`--policy ${p}: unknown policy; choose from ${POLICIES.join(", ")}`);
      if (!out.includes(p)) out.push(p);
    }
  }
  return out.length > 0 ? out : [...POLICIES];
}

const secs = (s: number) => formatDuration(s);

/** --seeds: "A-B" (inclusive) or "a,b,c"; at most 1,000 seeds. */
export function seedList(value: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(value.trim());
  let seeds: number[];
  if (range) {
    const [a, b] = [Number(range[1]), Number(range[2])];
    if (b < a) throw new UsageError(`--seeds ${value}: the range ends before it starts`);
    if (b - a >= 1000) throw new UsageError(`--seeds ${value}: at most 1000 seeds`);
    seeds = Array.from({ length: b - a + 1 }, (_, i) => a + i);
  } else {
    seeds = value.split(",").map((p) => {
      const t = p.trim();
      if (!/^\d+$/.test(t)) throw new UsageError(`--seeds ${value}: "${t}" is not a seed (a whole number >= 0); give A-B or a comma list`);
      return Number(t);
    });
    if (seeds.length > 1000) throw new UsageError(`--seeds ${value}: at most 1000 seeds`);
  }
  if (new Set(seeds).size !== seeds.length) throw new UsageError(`--seeds ${value}: a seed appears twice`);
  return seeds;
}

export default defineCommand({
  meta: { name: "sim", description: "Replay an SWF workload trace through the scheduling policies on a simulated cluster and compare them" },
  args,
  run: ({ args: a }) =>
    guard("sim", async () => {
      if (!a.swf) throw new UsageError("--swf FILE is required (a trace in Standard Workload Format)");
      const pols = policies(a.policy);
      let text: string;
      try {
        text = readFileSync(a.swf, "utf8");
      } catch (e) {
        throw new UsageError(`--swf ${a.swf}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
      }
      const trace = parseSwf(text);
      for (const bad of trace.errors.slice(0, 10)) err(`ebb sim: ${a.swf}:${bad.line}: ${bad.message}\n`);
      if (trace.errors.length > 10) err(`ebb sim: ... and ${trace.errors.length - 10} more bad lines\n`);
      const { jobs: all, skipped } = traceJobs(trace);
      if (skipped.length > 0) err(`ebb sim: skipped ${skipped.length} job(s) without a run time or size (first: line ${skipped[0]!.line}, ${skipped[0]!.message})\n`);
      const cores = intFlag(a["cores-per-node"], "--cores-per-node") ?? 1;
      const machine = traceMachine(trace.header, cores);
      const nodes = intFlag(a.nodes, "--nodes") ?? machine?.nodes;
      if (!nodes) throw new UsageError(`--nodes is needed: ${a.swf} has no MaxNodes or MaxProcs header`);
      if (a.nodes === undefined && machine?.note) err(`ebb sim: ${machine.note}\n`);
      const limit = intFlag(a.limit, "--limit");
      const trace2 = limit ? all.slice(0, limit) : all;
      if (trace2.length === 0) throw new UsageError(`${a.swf}: no usable jobs`);
      const cost = numPair(a["resize-cost"], "--resize-cost", 0, 1e6);
      const eff = numPair(a.efficiency, "--efficiency", 0.01, 1);
      if (eff && !(eff[1] > eff[0])) throw new UsageError(`--efficiency ${a.efficiency}: give LO,HI with LO < HI`);
      const config: Partial<ErsConfig> = {
        interval: numberFlag(a.interval, "--interval", { above: 0 }),
        upper: numberFlag(a.upper, "--upper", { above: 0 }),
        lower: numberFlag(a.lower, "--lower", { min: 0 }),
        settle: numberFlag(a.settle, "--settle", { min: 0 }),
        payoff: a.payoff !== false,
      };
      for (const k of Object.keys(config) as (keyof ErsConfig)[]) if (config[k] === undefined) delete config[k];
      if ((config.lower ?? DEFAULT_CONFIG.lower) >= (config.upper ?? DEFAULT_CONFIG.upper)) throw new UsageError(`--lower must be below --upper (${config.lower ?? DEFAULT_CONFIG.lower} >= ${config.upper ?? DEFAULT_CONFIG.upper})`);
      if (a["whole-nodes"] && a["cores-per-node"] === undefined) throw new UsageError("--whole-nodes goes with --cores-per-node K (nodes are whole with one core each otherwise)");
      const workload = {
        nodes,
        coresPerNode: cores,
        shared: cores > 1 && a["whole-nodes"] !== true,
        malleable: numberFlag(a.malleable, "--malleable", { min: 0, max: 1 }) ?? 0.5,
        seed: intFlag(a.seed, "--seed", { min: 0 }) ?? 1,
        arrivalScale: numberFlag(a["arrival-scale"], "--arrival-scale", { above: 0 }),
        cost: cost ? { fixed: cost[0], perNode: Number.isNaN(cost[1]) ? 0 : cost[1] } : undefined,
        efficiency: eff as readonly [number, number] | undefined,
      };
      const priority = priorityFlags(a.priority, a["half-life"]);
      if (a.seeds !== undefined && a.seed !== undefined) throw new UsageError("--seed and --seeds exclude each other");
      const seeds = a.seeds === undefined ? undefined : seedList(a.seeds);
      if (seeds && a["jobs-csv"]) throw new UsageError("--jobs-csv writes one seed's jobs: use it with --seed, not --seeds");
      const availability = availabilityFlags(a, nodes);
      if (availability && workload.shared) throw new UsageError("--availability and --availability-gen replay whole nodes only: with --cores-per-node K add --whole-nodes");
      // A replay thread keeps a CPU of JIT compiling busy beside it in its first seconds: half the CPUs.
      const threads = intFlag(a.threads, "--threads", { max: 1024 }) ?? Math.max(1, Math.floor(availableParallelism() / 2));
      const progress = new Progress(isTerminal(2), a.progress === true);
      jitPolicy(NORMAL);
      if (seeds) return runSeedsCommand(a, { trace: trace2, workload, pols, config, seeds, nodes, progress, priority, availability, threads });
      const { seed, ...drawn } = workload;
      const one = await runSeedsOnThreads({ trace: trace2, workload: drawn, seeds: [seed], policies: pols, config, check: a.check === true, priority, availability, onProgress: progress.update }, threads);
      const report: SimReport = { results: one.results.map((r) => r.perSeed[0]!), skipped: one.skipped, malleableJobs: one.malleableJobs };
      progress.clear();
      if (report.skipped.length > 0) err(`ebb sim: left out ${report.skipped.length} job(s) larger than the cluster (first: line ${report.skipped[0]!.line}, ${report.skipped[0]!.message})\n`);
      if (a["jobs-csv"]) {
        const rows = ["policy,job,submit,start,end,wait,turnaround,reference,nodes,min_nodes,max_nodes,malleable,start_nodes,peak_nodes,resizes"];
        for (const r of report.results) {
          for (const j of r.run.jobs) {
            rows.push([r.policy, j.id, j.submit, r3(j.start), r3(j.end), r3(j.start - j.submit), r3(j.end - j.submit), r3(j.reference), j.nodes, j.minNodes, j.maxNodes, j.malleable ? 1 : 0, j.startNodes, j.peakNodes, j.resizes].join(","));
          }
        }
        try {
          writeFileSync(a["jobs-csv"], rows.join("\n") + "\n");
        } catch (e) {
          throw new UsageError(`--jobs-csv ${a["jobs-csv"]}: ${(e as Error).message}`);
        }
      }
      // --check: policies that claim EASY's promise and broke it, and any that over-allocated a node, fail the command.
      const broke = a.check ? report.results.filter((r) => (POLICY_TABLE[r.policy].easyPromise && r.run.violations.length > 0) || r.run.overAllocated.length > 0).map((r) => r.policy) : [];
      if (a.json) {
        printJson({
          trace: a.swf,
          nodes,
          jobs: trace2.length - report.skipped.length,
          malleableJobs: report.malleableJobs,
          seed: workload.seed,
          badLines: trace.errors,
          results: report.results.map((r) => ({
            policy: r.policy,
            ...r.metrics,
            wallMs: Math.round(r.wallMs),
            events: r.run.events,
            eventsPerSecond: Math.round(r.run.events / Math.max(1e-3, r.wallMs / 1000)),
            ...(a.check ? { check: { claims: POLICY_TABLE[r.policy].easyPromise, heads: r.run.heads, violations: r.run.violations, overAllocated: r.run.overAllocated } } : {}),
            ...(r.run.hosts ? { availability: r.run.hosts } : {}),
          })),
        });
        return broke.length > 0 ? 1 : 0;
      }
      out(
        `${trace2.length - report.skipped.length} jobs (${report.malleableJobs} malleable) on ${nodes} nodes${workload.shared ? ` of ${cores} cores (shared)` : ""}, seed ${workload.seed}\n`,
      );
      const rows = report.results.map((r) => {
        const m = r.metrics;
        return [r.policy, secs(m.makespan), secs(m.meanWait), secs(m.p95Wait), secs(m.meanTurnaround), m.meanBoundedSlowdown.toFixed(1), `${(m.utilization * 100).toFixed(1)}%`, String(m.resizes), ...hostColumns(m, availability), `${(r.wallMs / 1000).toFixed(1)} s`, rate(r.run.events, r.wallMs)];
      });
      out(table(["POLICY", "MAKESPAN", "MEAN WAIT", "P95 WAIT", "MEAN TURNAROUND", "MEAN BSLD", "UTIL", "RESIZES", ...hostHeaders(availability), "SIM TIME", "EVENTS/S"], rows));
      if (a.check) {
        for (const r of report.results) {
          const claims = POLICY_TABLE[r.policy].easyPromise;
          const v = r.run.violations;
          out(`\ncheck ${r.policy}: ${v.length} of ${r.run.heads} first-in-line job(s) started after their reservation${claims ? "" : " (the policy does not claim EASY's promise)"}${workload.shared ? `; ${r.run.overAllocated.length} share(s) over-allocated a node` : ""}\n`);
          if (v.length > 0) out(table(["JOB", "RESERVATION", "START", "LATE BY"], v.map((x) => [String(x.job), r3(x.reservation), r3(x.start), secs(x.start - x.reservation)])));
          for (const o of r.run.overAllocated.slice(0, 10)) out(`  over-allocated: ${o}\n`);
        }
        if (broke.length > 0) err(`ebb sim: --check: ${broke.join(", ")} broke EASY's promise or over-allocated a node\n`);
      }
      return broke.length > 0 ? 1 : 0;
    }),
});

/** --availability FILE or --availability-gen with its settings; undefined without either. */
function availabilityFlags(a: Record<string, unknown>, nodes: number): SimRequest["availability"] {
  const file = a.availability as string | undefined;
  const gen = a["availability-gen"] === true;
  const genFlags = ["workstations", "owner-every", "owner-stay", "owner-speed"].filter((k) => a[k] !== undefined);
  if (file !== undefined && gen) throw new UsageError("--availability FILE and --availability-gen exclude each other: replay a file or generate one");
  if (!gen && genFlags.length > 0) throw new UsageError(`--${genFlags[0]} goes with --availability-gen`);
  if (gen) {
    return {
      gen: {
        workstations: numberFlag(a.workstations as string | undefined, "--workstations", { min: 0, max: 1 }) ?? GEN_DEFAULTS.workstations,
        ownerEvery: numberFlag(a["owner-every"] as string | undefined, "--owner-every", { above: 0 }) ?? GEN_DEFAULTS.ownerEvery,
        ownerStay: numberFlag(a["owner-stay"] as string | undefined, "--owner-stay", { above: 0 }) ?? GEN_DEFAULTS.ownerStay,
        ownerSpeed: numberFlag(a["owner-speed"] as string | undefined, "--owner-speed", { min: 0, max: 1 }) ?? GEN_DEFAULTS.ownerSpeed,
      },
    };
  }
  if (file === undefined) return undefined;
  let text: string;
  try {
    if (statSync(file).size > AVAILABILITY_MAX_BYTES) throw new UsageError(`--availability ${file}: larger than ${AVAILABILITY_MAX_BYTES / 2 ** 20} MiB`);
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--availability ${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
  try {
    return { changes: parseAvailability(text, nodes) };
  } catch (e) {
    throw new UsageError(`--availability ${file}: ${(e as Error).message}`);
  }
}

/** An availability file's size limit (bytes): its changes are held in memory. */
const AVAILABILITY_MAX_BYTES = 64 * 2 ** 20;

const hostHeaders = (on: unknown) => (on ? ["MOVES", "DECLINED", "OWNER NODE-H"] : []);
function hostColumns(m: { moves?: number; movesDeclined?: number; ownerNodeHours?: number }, on: unknown): string[] {
  return on ? [(m.moves ?? 0).toFixed(0), (m.movesDeclined ?? 0).toFixed(0), (m.ownerNodeHours ?? 0).toFixed(1)] : [];
}

/** --priority and --half-life: the multifactor config, or undefined for submit order. */
function priorityFlags(order: string | undefined, halfLife: string | undefined): PriorityConfig | undefined {
  if (order !== undefined && order !== "submit" && order !== "fairshare") throw new UsageError(`--priority ${order}: choose submit or fairshare`);
  if (halfLife !== undefined && order !== "fairshare") throw new UsageError("--half-life goes with --priority fairshare");
  if (order !== "fairshare") return undefined;
  return resolvePriority({ halfLife: numberFlag(halfLife, "--half-life", { min: 0 }) });
}

/** Events the replay handled per second of wall time, e.g. "52,300". */
function rate(events: number, wallMs: number): string {
  return Math.round(events / Math.max(1e-3, wallMs / 1000)).toLocaleString("en-US");
}

function r3(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 1000) / 1000) : "";
}

interface SeedsArgs {
  trace: SeedsRequest["trace"];
  workload: SeedsRequest["workload"];
  pols: PolicyName[];
  config: Partial<ErsConfig>;
  seeds: number[];
  nodes: number;
  progress: Progress;
  priority?: PriorityConfig;
  availability?: SimRequest["availability"];
  threads: number;
}

/** --seeds: one run per seed, the mean of each metric per policy; --check sums over the seeds. */
async function runSeedsCommand(a: { swf?: string; json?: boolean; check?: boolean }, s: SeedsArgs): Promise<number> {
  const report = await runSeedsOnThreads({
    trace: s.trace,
    workload: s.workload,
    seeds: s.seeds,
    policies: s.pols,
    config: s.config,
    check: a.check === true,
    priority: s.priority,
    availability: s.availability,
    onProgress: s.progress.update,
  }, s.threads);
  s.progress.clear();
  const violations = (r: (typeof report.results)[number]) => r.perSeed.flatMap((x, i) => x.run.violations.map((v) => ({ seed: r.seeds[i]!, ...v })));
  const heads = (r: (typeof report.results)[number]) => r.perSeed.reduce((n, x) => n + x.run.heads, 0);
  const events = (r: (typeof report.results)[number]) => r.perSeed.reduce((n, x) => n + x.run.events, 0);
  const overAllocated = (r: (typeof report.results)[number]) => r.perSeed.flatMap((x, i) => x.run.overAllocated.map((o) => `seed ${r.seeds[i]}: ${o}`));
  const broke = a.check ? report.results.filter((r) => (POLICY_TABLE[r.policy].easyPromise && violations(r).length > 0) || overAllocated(r).length > 0).map((r) => r.policy) : [];
  if (a.json) {
    printJson({
      trace: a.swf,
      nodes: s.nodes,
      jobs: s.trace.length - report.skipped.length,
      seeds: s.seeds,
      arrivalScale: s.workload.arrivalScale ?? 1,
      results: report.results.map((r) => ({
        policy: r.policy,
        mean: r.metrics,
        perSeed: r.perSeed.map((x, i) => ({ seed: r.seeds[i], ...x.metrics })),
        wallMs: Math.round(r.wallMs),
        events: events(r),
        eventsPerSecond: Math.round(events(r) / Math.max(1e-3, r.wallMs / 1000)),
        ...(a.check ? { check: { claims: POLICY_TABLE[r.policy].easyPromise, heads: heads(r), violations: violations(r), overAllocated: overAllocated(r) } } : {}),
      })),
    });
    return broke.length > 0 ? 1 : 0;
  }
  out(`${s.trace.length - report.skipped.length} jobs (${report.malleableJobs.toFixed(1)} malleable on average) on ${s.nodes} nodes${s.workload.shared ? ` of ${s.workload.coresPerNode} cores (shared)` : ""}, means over seeds ${s.seeds.join(",")}\n`);
  const rows = report.results.map((r) => {
    const m = r.metrics;
    return [r.policy, secs(m.makespan), secs(m.meanWait), secs(m.p95Wait), secs(m.meanTurnaround), m.meanBoundedSlowdown.toFixed(1), `${(m.utilization * 100).toFixed(1)}%`, m.resizes.toFixed(0), ...hostColumns(m, s.availability), `${(r.wallMs / 1000).toFixed(1)} s`, rate(events(r), r.wallMs)];
  });
  out(table(["POLICY", "MAKESPAN", "MEAN WAIT", "P95 WAIT", "MEAN TURNAROUND", "MEAN BSLD", "UTIL", "RESIZES", ...hostHeaders(s.availability), "SIM TIME", "EVENTS/S"], rows));
  if (a.check) {
    for (const r of report.results) {
      const v = violations(r);
      const o = overAllocated(r);
      out(`\ncheck ${r.policy}: ${v.length} of ${heads(r)} first-in-line job(s) started after their reservation, over ${s.seeds.length} seeds${POLICY_TABLE[r.policy].easyPromise ? "" : " (the policy does not claim EASY's promise)"}${s.workload.shared ? `; ${o.length} share(s) over-allocated a node` : ""}\n`);
      if (v.length > 0) out(table(["SEED", "JOB", "RESERVATION", "START", "LATE BY"], v.map((x) => [String(x.seed), String(x.job), r3(x.reservation), r3(x.start), secs(x.start - x.reservation)])));
      for (const line of o.slice(0, 10)) out(`  over-allocated: ${line}\n`);
    }
    if (broke.length > 0) err(`ebb sim: --check: ${broke.join(", ")} broke EASY's promise or over-allocated a node\n`);
  }
  return broke.length > 0 ? 1 : 0;
}
