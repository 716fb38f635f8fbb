/**
 * The controller's end of CFG monitoring (§10.2.3): each node's reduced CFG of a job's step, the
 * job's merged CFG with per-loop series, and the MTCT samples of its current distributed loop
 * (what the SPMD-phase model reads, ahead of the probe-to-probe timing). Kept in memory.
 */
import { currentMtct, mergeCfg, observeCfg, variance, type JobCfg, type Series } from "../../cfg/merge.ts";
import { rankRange, type NodeCfg } from "../../cfg/node.ts";
import { phaseOfSite } from "../../comm/cfg.ts";

interface Entry {
  stepId: number;
  ntasks: number;
  nodes: Map<string, NodeCfg>;
  /** Reports received per node: a node's first report spans its ranks' start-up, no window. */
  reports: Map<string, number>;
  cfg?: JobCfg;
  /** MTCT of the current distributed loop, one per new window of it. */
  samples: Array<{ time: number; mtct: number; iterations: number }>;
  /** Why the step is not monitored, when it is not. */
  monitor?: string;
}

const MAX_SAMPLES = 1000;

export class JobCfgs {
  private readonly jobs = new Map<number, Entry>();

  update(jobId: number, node: string, m: { stepId: number; ntasks: number; cfg: NodeCfg; monitor?: string }, now = Date.now()): void {
    let e = this.jobs.get(jobId);
    if (e && m.stepId < e.stepId) return;
    if (!e || m.stepId > e.stepId) {
      e = { stepId: m.stepId, ntasks: m.ntasks, nodes: new Map(), reports: new Map(), samples: e?.samples ?? [] };
      this.jobs.set(jobId, e);
    }
    if (m.monitor) e.monitor = m.monitor;
    e.nodes.set(node, m.cfg);
    e.reports.set(node, (e.reports.get(node) ?? 0) + 1);
    const before = e.cfg;
    e.cfg = observeCfg(before, mergeCfg([...e.nodes.values()]), m.ntasks);
    const cur = e.cfg.loops.find((l) => l.key === e.cfg!.current);
    const prev = before?.loops.find((l) => l.key === cur?.key);
    const mtct = currentMtct(e.cfg);
    // A sample is one window of the loop: the growth since this node's previous report, while every
    // other node's part stays as it was. A node's first report is no such window: it holds the
    // ranks' start-up (the first collective waits for the slowest rank to start) and would pass
    // for communication.
    const windowed = prev !== undefined && [...e.reports.values()].every((n) => n >= 2);
    if (cur && mtct !== undefined && windowed && cur.iter.n > prev.iter.n) {
      e.samples.push({ time: now, mtct, iterations: cur.iterations - (prev?.iterations ?? 0) });
      if (e.samples.length > MAX_SAMPLES) e.samples.splice(0, e.samples.length - MAX_SAMPLES);
    }
  }

  get(jobId: number): JobCfg | undefined {
    return this.jobs.get(jobId)?.cfg;
  }

  monitor(jobId: number): string | undefined {
    return this.jobs.get(jobId)?.monitor;
  }

  /** MTCT samples of the job's current distributed loop taken at or after `since` (epoch ms). */
  samples(jobId: number, since = 0): Array<{ time: number; mtct: number; iterations: number }> {
    return (this.jobs.get(jobId)?.samples ?? []).filter((s) => s.time >= since);
  }

  forget(jobId: number): void {
    this.jobs.delete(jobId);
  }
}

const stats = (s: Series, scale: number) => ({
  mean: s.mean * scale,
  stddev: Math.sqrt(variance(s)) * scale,
  min: s.n > 0 ? s.min * scale : 0,
  max: s.n > 0 ? s.max * scale : 0,
  recent: s.recent.map((x) => x * scale),
});

/** An EPOP phase's name for a loop whose head is that phase's site (comm/cfg.ts). */
function phaseName(head: number, phases: readonly { pc: number; name: string }[]): string | null {
  const pc = phaseOfSite(head);
  if (pc === undefined) return null;
  return phases.find((p) => p.pc === pc)?.name ?? `pc ${pc}`;
}

/** The API's form of a job's CFG (times in ms). */
export function cfgView(cfg: JobCfg | undefined, monitor: string | undefined, phases: readonly { pc: number; name: string }[] = []) {
  if (!cfg) return monitor ? { monitored: false, reason: monitor, ntasks: 0, current: null, loops: [] } : null;
  const ms = 1e-6;
  return {
    // Unmonitored ranks report no loops, only the reason.
    monitored: !(monitor !== undefined && cfg.loops.length === 0),
    reason: monitor ?? null,
    ntasks: cfg.ntasks,
    current: cfg.current,
    loops: cfg.loops.map((l) => ({
      key: l.key,
      head: l.head,
      phase: phaseName(l.head, phases),
      parent: l.parent,
      ranks: rankRange(l.ranks),
      rankCount: l.ranks.length,
      distributed: l.distributed,
      visits: l.visits,
      iterations: l.iterations,
      iterMs: l.iterTime * ms,
      mpiMs: l.mpiPerIter * ms,
      mtct: Number.isFinite(l.mtct) ? l.mtct : null,
      iter: stats(l.iter, ms),
      mpi: stats(l.mpi, ms),
    })),
  };
}
