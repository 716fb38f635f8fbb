/**
 * bench sched-resources: one scheduling pass in resource mode at the scale — 10,000
 * pending, 1,000 running, 1,024 nodes x 64 cores x 8 GPUs — against the same pass in whole-node
 * mode (the same jobs on whole nodes) measured in the same run. The pass is the controller's
 * periodic one: `makePlan` with the default policy (ebb), node names and shares, and why every
 * waiting job waits.
 */
import type { NodeResources, NodeShare, ResourceRequest } from "../src/domain/resources.ts";
import { resolveConfig, type PolicyName } from "../src/sched/config.ts";
import { makePlan, type Snapshot, type SnapshotJob } from "../src/sched/plan.ts";
import { Pool } from "../src/sched/pool.ts";
import type { ClusterNode, PendingJob } from "../src/sched/types.ts";
import { loadavg } from "node:os";
import { mulberry32 } from "../src/sim/random.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const NOW = 1_700_000_000_000;
const NODE: NodeResources = { cores: 64, memMiB: 256 * 1024, gpus: Array(8).fill("a100"), features: [] };

interface Cluster {
  resources: Snapshot;
  whole: Snapshot;
}

/** A full cluster: running jobs placed by the pool until 1,000 run; a queue of mixed requests. */
export function cluster(nodeCount: number, runningCount: number, pendingCount: number, policy: PolicyName): Cluster {
  const r = mulberry32(4242);
  const pick = (n: number) => Math.floor(r.next() * n);
  const names = Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`);
  const nodes: ClusterNode[] = names.map((name) => ({ name, up: true, resources: NODE }));
  /** Running jobs are smaller (1,000 of them fill the cluster), waiting ones up to 8 nodes. */
  const request = (scale: number): { req?: ResourceRequest; nodes: number; elastic: boolean } => {
    const kind = pick(10);
    if (kind < 6) {
      const tasks = 1 + Math.floor(r.next() ** 2 * 32 * scale);
      const gpus = pick(4) === 0 ? { gpusPerTask: 1 } : {};
      return { req: { tasks, cpusPerTask: 1 + pick(2), memPerCpuMiB: 1024 + pick(4) * 1024, exclusive: false, ...gpus }, nodes: Math.max(1, Math.ceil(tasks / 64)), elastic: false };
    }
    if (kind < 8) return { req: { nodes: 1 + pick(2 * scale), cpusPerTask: 1, exclusive: true }, nodes: 0, elastic: false };
    return { nodes: 1 + pick(2 * scale), elastic: true };
  };
  const pool = Pool.of(nodes, []);
  const running: SnapshotJob[] = [];
  for (let id = 1; running.length < runningCount && id < runningCount * 20; id++) {
    const q = request(1);
    const count = q.req?.exclusive ? q.req.nodes! : q.nodes;
    const job: PendingJob = { id, minNodes: count, maxNodes: count, timeLimit: 3600, submitTime: 0, ...(q.req ? { resources: q.req } : {}) };
    const placed = q.req && !q.req.exclusive ? pool.place(q.req) : pool.place({ exclusive: true, cpusPerTask: 1 }, { nodes: count });
    if (!placed) continue;
    pool.take(placed.shares);
    const elastic = q.elastic;
    const mtct = r.next() < 0.3 ? 0.002 : 0.3;
    running.push({
      id,
      nodes: placed.nodes.length,
      nodeNames: placed.nodes,
      shares: placed.shares,
      ...(job.resources ? { resources: job.resources } : {}),
      minNodes: elastic ? 1 : placed.nodes.length,
      maxNodes: elastic ? 4 * placed.nodes.length : placed.nodes.length,
      elastic,
      submitTime: NOW - 7_200_000 + id,
      startTime: NOW - 3_600_000,
      timeLimit: 7200 + pick(36_000),
      samples: elastic ? [1, 2, 3, 4].map((k) => ({ time: NOW - k * 60_000, mtct: mtct * (0.95 + 0.1 * r.next()) })) : [],
      adapting: false,
    });
  }
  if (running.length < runningCount) throw new Error(`placed ${running.length} running jobs of ${runningCount}`);
  const pending: PendingJob[] = [];
  for (let i = 0; i < pendingCount; i++) {
    const q = request(4);
    const count = q.req?.exclusive ? q.req.nodes! : q.nodes;
    pending.push({ id: 100_000 + i, minNodes: q.elastic ? Math.ceil(count / 2) : count, maxNodes: count, elastic: q.elastic, timeLimit: 600 + pick(86_400), submitTime: NOW - 3_600_000 + i * 100, ...(q.req ? { resources: q.req } : {}) });
  }
  const config = resolveConfig({ policy });
  const resources: Snapshot = { now: NOW, nodes, namesSorted: true, running, pending, sorted: true, config, reasons: true };
  // The same jobs on whole nodes: each running job holds its nodes whole, each waiting one asks for whole nodes.
  const held = new Map<string, number>();
  for (const j of running) for (const n of j.nodeNames) held.set(n, j.id);
  const whole: Snapshot = {
    ...resources,
    nodes: names.map((name) => ({ name, up: true, cpus: 64, ...(held.has(name) ? { jobId: held.get(name) } : {}) })),
    running: running.map(({ shares: _s, resources: _r, ...j }) => j),
    pending: pending.map(({ resources: _r, ...j }) => j),
  };
  return { resources, whole };
}

/**
 * The median wall time of `reps` passes, after 5 that are not counted (the JIT's tiers take a few
 * calls), and the process's CPU time per pass (all its threads, the collector's too): on a machine
 * other work shares, the wall time also counts the waits for a core.
 */
function time(fn: () => void, reps: number): { wall: number; cpu: number } {
  for (let i = 0; i < 5; i++) fn();
  const xs: number[] = [];
  const u0 = process.cpuUsage();
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    xs.push(performance.now() - t0);
  }
  const u = process.cpuUsage(u0);
  return { wall: median(xs), cpu: (u.user + u.system) / 1000 / reps };
}

const bench: Bench = {
  name: "sched-resources",
  description: "one makePlan pass in resource mode (10k pending, 1k running, 1,024 nodes x 64 cores x 8 GPUs) against the same pass on whole nodes",
  async run({ quick }) {
    const reps = quick ? 5 : 15;
    const figures: Figure[] = [];
    for (const policy of ["ebb", "easy"] as PolicyName[]) {
      const c = cluster(1024, 1000, 10_000, policy);
      const plan = makePlan(c.resources);
      const wholePlan = makePlan(c.whole);
      if (plan.waiting.length < 9000) throw new Error(`bench: only ${plan.waiting.length} jobs wait; the cluster is not full`);
      const held = new Set<string>();
      for (const j of c.resources.running) for (const s of j.shares as NodeShare[]) if (s.cores.length < 64) held.add(s.node);
      const tRes = time(() => makePlan(c.resources), reps);
      const tWhole = time(() => makePlan(c.whole), reps);
      const load = loadavg()[0]!.toFixed(1);
      figures.push({
        name: `makePlan ${policy}, resource mode (${plan.starts.length} starts, ${plan.resizes.length} resizes, ${held.size} shared nodes), 10k pending, 1k running, 1,024 nodes x 64 cores x 8 GPUs`,
        value: tRes.wall,
        unit: "ms",
        baseline: { name: `the same pass on whole nodes (${wholePlan.starts.length} starts)`, value: tWhole.wall },
        better: "lower",
        goal: "< 50 ms",
        met: tRes.wall < 50,
        cpu: `CPU per pass ${tRes.cpu.toFixed(1)} | ${tWhole.cpu.toFixed(1)} ms, load ${load}`,
      });
    }
    return figures;
  },
};

export default bench;
