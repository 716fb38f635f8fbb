/**
 * bench sched: one scheduling pass (batch + ERS) at scale, and time balancing against the
 * dissertation's Gaussian elimination, each measured next to its baseline in the same run.
 */
import { timeBalance, type BalanceJob } from "../src/sched/balance.ts";
import { resolveConfig } from "../src/sched/config.ts";
import { planPass } from "../src/sched/policies/index.ts";
import { makePlan, type Snapshot } from "../src/sched/plan.ts";
import type { JobState, PassInput, PendingJob } from "../src/sched/types.ts";
import { mulberry32 } from "../src/sim/random.ts";
import { median, type Bench, type Figure } from "./lib.ts";
import { gaussianBalance } from "../test/support/gaussian.ts";

const NOW = 1_700_000_000_000;

function passInput(nodes: number, runningCount: number, pendingCount: number, policy: "ebb" | "easy" | "ers"): PassInput {
  const r = mulberry32(12345);
  const running: JobState[] = [];
  let held = 0;
  for (let i = 0; i < runningCount; i++) {
    const n = 1 + Math.floor(r.next() * 7);
    held += n;
    const elastic = i % 2 === 0;
    const mtct = r.next() < 0.3 ? 0.002 : r.next() < 0.5 ? 0.05 : 0.3;
    running.push({
      id: i + 1,
      nodes: n,
      minNodes: elastic ? 1 : n,
      maxNodes: elastic ? 4 * n : n,
      elastic,
      submitTime: NOW - 7_200_000 + i,
      startTime: NOW - 3_600_000,
      timeLimit: 7200 + Math.floor(r.next() * 36_000),
      samples: elastic ? [1, 2, 3, 4].map((k) => ({ time: NOW - k * 60_000, mtct: mtct * (0.95 + 0.1 * r.next()) })) : [],
      adapting: false,
      lastAdaptEnd: elastic && r.next() < 0.2 ? NOW - 30_000 : undefined,
    });
  }
  const pending: PendingJob[] = [];
  for (let i = 0; i < pendingCount; i++) {
    const size = 1 + Math.floor(r.next() ** 3 * 512);
    const moldable = i % 2 === 0;
    pending.push({ id: runningCount + i + 1, minNodes: moldable ? Math.ceil(size / 4) : size, maxNodes: size, preferredNodes: size, elastic: moldable, timeLimit: 600 + Math.floor(r.next() * 86_400), submitTime: NOW - 3_600_000 + i * 100 });
  }
  return { now: NOW, upNodes: nodes, idleNodes: Math.max(0, nodes - held), running, pending, config: resolveConfig({ policy }) };
}

/** The same cluster as a snapshot with node names (what the controller and the simulator plan from): held nodes first, in rank order. */
function snapshotOf(input: PassInput): Snapshot {
  const up = input.upNodes;
  const names = Array.from({ length: up }, (_, i) => `node${i + 1}`);
  const nodes: Snapshot["nodes"][number][] = names.map((name) => ({ name, up: true, cpus: 8 }));
  let k = 0;
  const running = input.running.map((j) => {
    const nodeNames = names.slice(k, k + j.nodes);
    for (let i = k; i < k + j.nodes && i < up; i++) nodes[i]!.jobId = j.id;
    k += j.nodes;
    return { ...j, nodeNames };
  });
  return { now: input.now, nodes, running, pending: input.pending, config: input.config, reasons: true };
}

function time(fn: () => void, reps: number): number {
  fn();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

function balanceJobs(n: number): { jobs: BalanceJob[]; idle: number } {
  const r = mulberry32(777);
  const jobs = Array.from({ length: n }, () => {
    const nodes = 1 + Math.floor(r.next() * 16);
    return { nodes, remaining: 60 + r.next() * 36_000, lo: Math.max(1, Math.floor(nodes / 2)), hi: nodes * 2 };
  });
  return { jobs, idle: Math.floor(n / 10) };
}

/** Eq. 10.6 in augmented form, dense Gaussian elimination with partial pivoting (the dissertation's way). */
function gaussianDense(jobs: readonly BalanceJob[], idle: number): number[] {
  return gaussianBalance(jobs, idle).map(Math.floor);
}

/** The same system eliminated without the zeros: bidiagonal rows, one dense row; O(n). */
function gaussianSparse(jobs: readonly BalanceJob[], idle: number): number[] {
  const n = jobs.length;
  // Rows give x_i' = x_0' * t_i / t_0; substituting into the last row is the elimination.
  let total = idle;
  let coef = 0;
  for (const j of jobs) {
    total += j.nodes;
    coef += (j.nodes * j.remaining) / jobs[0]!.remaining;
  }
  const x0 = total / coef;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(((x0 * jobs[i]!.remaining) / jobs[0]!.remaining) * jobs[i]!.nodes);
  return out;
}

const bench: Bench = {
  name: "sched",
  description: "one batch + ERS pass at 4,096 nodes; time balancing of 10,000 jobs",
  async run({ quick }) {
    const reps = quick ? 5 : 21;
    const figures: Figure[] = [];
    const ebbIn = passInput(4096, 1000, 10_000, "ebb");
    const easyIn = { ...ebbIn, config: resolveConfig({ policy: "easy" }) };
    const ersIn = { ...ebbIn, config: resolveConfig({ policy: "ers" }) };
    const ersPlan = planPass(ersIn);
    if (ersPlan.resizes.length === 0) throw new Error("bench input produced no resizes: not exercising the ERS");
    const ebbPlan = planPass(ebbIn);
    if (ebbPlan.resizes.length === 0 && ebbPlan.notes.length === 0) throw new Error("bench input made ebb weigh no resize");
    const tEbb = time(() => planPass(ebbIn), reps);
    const tErs = time(() => planPass(ersIn), reps);
    const tEasy = time(() => planPass(easyIn), reps);
    figures.push({ name: `pass: ebb (batch + admit/lend, ${ebbPlan.resizes.length} resizes), 10k pending, 1k running, 4096 nodes`, value: tEbb, unit: "ms", baseline: { name: "batch-only EASY pass", value: tEasy }, better: "lower", goal: "< 50 ms", met: tEbb < 50 });
    // The whole pass the controller and the simulator run: node names, spawn grants, the policy, the remap of each resize, why each job waits.
    const snap = snapshotOf(ebbIn);
    const whole = makePlan(snap);
    if (whole.starts.length + whole.resizes.length === 0) throw new Error("bench snapshot planned nothing");
    const tPlan = time(() => makePlan(snap), reps);
    const tPass = time(() => planPass(ebbIn), reps);
    figures.push({ name: `makePlan: ebb with node names + wait reasons (${whole.starts.length} starts, ${whole.resizes.length} resizes), 10k pending, 1k running, 4096 nodes`, value: tPlan, unit: "ms", baseline: { name: "the same policy pass on counts (planPass)", value: tPass }, better: "lower", goal: "< 50 ms", met: tPlan < 50 });
    figures.push({ name: "pass: ers (batch + ERS), 10k pending, 1k running, 4096 nodes", value: tErs, unit: "ms", baseline: { name: "batch-only EASY pass", value: tEasy }, better: "lower", goal: "< 50 ms", met: tErs < 50 });

    const big = balanceJobs(10_000);
    const total = big.jobs.reduce((a, j) => a + j.nodes, 0) + big.idle;
    const unbounded = big.jobs.map((j) => ({ nodes: j.nodes, remaining: j.remaining }));
    const tBal = time(() => timeBalance(big.jobs, total), reps * 3);
    const tClosed = time(() => timeBalance(unbounded, total), reps * 3);
    const tSparse = time(() => gaussianSparse(unbounded, big.idle), reps * 3);
    figures.push({ name: "time balancing, 10,000 jobs with ranges", value: tBal, unit: "ms", baseline: { name: "Gaussian elimination, zeros skipped", value: tSparse }, better: "lower", goal: "< 5 ms", met: tBal < 5 });
    figures.push({ name: "time balancing, 10,000 jobs, no ranges (closed form)", value: tClosed, unit: "ms", baseline: { name: "Gaussian elimination, zeros skipped", value: tSparse }, better: "lower", goal: "< 5 ms", met: tClosed < 5 });
    const small = balanceJobs(quick ? 150 : 300);
    const sTotal = small.jobs.reduce((a, j) => a + j.nodes, 0) + small.idle;
    const free = small.jobs.map((j) => ({ nodes: j.nodes, remaining: j.remaining }));
    const tSmall = time(() => timeBalance(free, sTotal), reps);
    const tDense = time(() => gaussianDense(free, small.idle), quick ? 2 : 3);
    // Same answer, as a guard that the baseline solves the same problem.
    const ours = timeBalance(free, sTotal).sizes;
    const theirs = gaussianDense(free, small.idle);
    const off = ours.reduce((m, s, i) => Math.max(m, Math.abs(s - theirs[i]!)), 0);
    if (off > 1) throw new Error(`closed form and Gaussian elimination disagree by ${off} nodes`);
    figures.push({ name: `time balancing, ${small.jobs.length} jobs (closed form)`, value: tSmall, unit: "ms", baseline: { name: "dense Gaussian elimination (dissertation)", value: tDense }, better: "lower" });
    return figures;
  },
};

export default bench;
