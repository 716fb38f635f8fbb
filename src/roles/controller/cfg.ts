/**
 * The controller's end of CFG monitoring (§10.2.3): each node's reduced CFG of a job's step, the
 * job's merged CFG with per-loop series, and the MTCT samples of its current distributed loop
 * (what the SPMD-phase model reads, ahead of the probe-to-probe timing). Kept in memory.
 */
import { currentMtct, mergeCfg, observeCfg, variance, type JobCfg, type Series } from "../../cfg/merge.ts";
import { forest } from "../../cfg/nest.ts";
import { rankRange, type NodeCfg } from "../../cfg/node.ts";
import { phaseOfSite } from "../../comm/cfg.ts";
import { efficiency } from "../../model/efficiency.ts";
import { NodeCfg as NodeCfgSchema, ReducedLoop as ReducedLoopSchema } from "../../proto/cfg.ts";
import { z } from "zod";
import { logger } from "../../util/log.ts";

const log = logger("cfg");

/** A step's CFG as its launcher sends it: merged over the step's launch tree. */
export interface StepCfgReport {
  stepId: number;
  ntasks: number;
  /** Part of the job's elastic world: merged with the job's other elastic steps (a grow's joining step). */
  elastic: boolean;
  final: boolean;
  /** Fewest reports any node of the step has made. */
  reports: number;
  cfg: NodeCfg;
  monitor?: string;
}

interface Entry {
  /** The steps whose CFGs make up the job's: the newest rigid step, or every step of the elastic world. */
  steps: Map<number, StepCfgReport>;
  ntasks: number;
  cfg?: JobCfg;
  /** MTCT of the current distributed loop, one per new window of it. */
  samples: Array<{ time: number; mtct: number; iterations: number }>;
  /** Why the step is not monitored, when it is not. */
  monitor?: string;
}

const MAX_SAMPLES = 1000;

/** Where the controller keeps jobs' CFG state (SQLite: store/cfg.ts), so it outlives a restart. */
export interface CfgPersistence {
  save(jobId: number, data: unknown): void;
  all(): Array<{ jobId: number; data: unknown }>;
}

// JSON has no Infinity: a series' empty extremes and an infinite MTCT are stored as null.
const num = z.number().nullable();
const SeriesDoc = z.object({ n: z.int().nonnegative(), mean: z.number(), m2: z.number(), min: num, max: num, recent: z.array(z.number()) });
const JobLoopDoc = ReducedLoopSchema.extend({ distributed: z.boolean(), iterTime: z.number(), mpiPerIter: z.number(), mtct: num, iter: SeriesDoc, mpi: SeriesDoc });
/** The stored form of a job's entry. */
const EntryDoc = z.object({
  steps: z.array(
    z.object({ stepId: z.int().nonnegative(), ntasks: z.int().positive(), elastic: z.boolean(), final: z.boolean(), reports: z.int().nonnegative(), cfg: NodeCfgSchema, monitor: z.string().optional() }),
  ),
  ntasks: z.int().nonnegative(),
  cfg: z.object({ ntasks: z.int().nonnegative(), loops: z.array(JobLoopDoc), current: z.string().nullable() }).optional(),
  samples: z.array(z.object({ time: z.number(), mtct: z.number(), iterations: z.number() })),
  monitor: z.string().optional(),
});

const series = (s: z.infer<typeof SeriesDoc>): Series => ({ ...s, min: s.min ?? Number.POSITIVE_INFINITY, max: s.max ?? Number.NEGATIVE_INFINITY });

function toDoc(e: Entry): z.input<typeof EntryDoc> {
  return JSON.parse(JSON.stringify({ ...e, steps: [...e.steps.values()] }));
}

function fromDoc(d: z.infer<typeof EntryDoc>): Entry {
  return {
    steps: new Map(d.steps.map((s) => [s.stepId, s])),
    ntasks: d.ntasks,
    // forest(): a document stored by a build whose nesting could loop is read as a forest.
    cfg: d.cfg && { ...d.cfg, loops: forest(d.cfg.loops.map((l) => ({ ...l, mtct: l.mtct ?? Number.POSITIVE_INFINITY, iter: series(l.iter), mpi: series(l.mpi) }))) },
    samples: d.samples,
    monitor: d.monitor,
  };
}

export class JobCfgs {
  private readonly jobs = new Map<number, Entry>();

  constructor(private readonly persist?: CfgPersistence) {}

  /** After a controller restart: the stored state of every job; unreadable entries are skipped (and said). */
  restore(): void {
    if (!this.persist) return;
    for (const { jobId, data } of this.persist.all()) {
      const r = EntryDoc.safeParse(data);
      if (r.success) this.jobs.set(jobId, fromDoc(r.data));
      else log.warn(`stored CFG of job ${jobId} is unreadable: ${r.error.issues[0]?.path.join(".")}: ${r.error.issues[0]?.message}`);
    }
  }

  update(jobId: number, m: StepCfgReport, now = Date.now()): void {
    let e = this.jobs.get(jobId);
    const newest = e ? Math.max(...e.steps.keys()) : -1;
    if (e && !m.elastic && m.stepId < newest) return;
    if (!e || (!m.elastic && m.stepId > newest) || (m.elastic && ![...e.steps.values()].every((s) => s.elastic))) {
      // A new rigid step replaces the job's CFG (another program may run in it); an elastic world
      // keeps every step that joined it.
      e = { steps: new Map(), ntasks: m.ntasks, samples: e?.samples ?? [], monitor: undefined };
      this.jobs.set(jobId, e);
    }
    if (m.monitor) e.monitor = m.monitor;
    e.steps.set(m.stepId, m);
    // The world's size is the newest step's (a joining step knows the grown world).
    e.ntasks = e.steps.get(Math.max(...e.steps.keys()))!.ntasks;
    const before = e.cfg;
    const parts = [...e.steps.values()].map((s) => s.cfg);
    e.cfg = observeCfg(before, parts.length === 1 ? parts[0]! : mergeCfg(parts), e.ntasks);
    const cur = e.cfg.loops.find((l) => l.key === e.cfg!.current);
    const prev = before?.loops.find((l) => l.key === cur?.key);
    const mtct = currentMtct(e.cfg);
    // A sample is one window of the loop: the growth since the previous report. A node's first
    // report is no such window: it holds the ranks' start-up (the first collective waits for the
    // slowest rank to start) and would pass for communication.
    const windowed = prev !== undefined && [...e.steps.values()].every((s) => s.reports >= 2);
    if (cur && mtct !== undefined && windowed && cur.iter.n > prev.iter.n) {
      e.samples.push({ time: now, mtct, iterations: cur.iterations - (prev?.iterations ?? 0) });
      if (e.samples.length > MAX_SAMPLES) e.samples.splice(0, e.samples.length - MAX_SAMPLES);
    }
    this.persist?.save(jobId, toDoc(e));
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

  /**
   * A checkpoint-restart world restarted in step `stepId`: its processes are new, so its CFG starts
   * over from that step's reports (the samples taken so far stay).
   */
  restarted(jobId: number, stepId: number): void {
    const e = this.jobs.get(jobId);
    if (!e) return;
    for (const id of [...e.steps.keys()]) if (id < stepId) e.steps.delete(id);
    e.cfg = undefined;
    this.persist?.save(jobId, toDoc(e));
  }
}

const stats = (s: Series, scale: number) => ({
  mean: s.mean * scale,
  stddev: Math.sqrt(variance(s)) * scale,
  min: s.n > 0 ? s.min * scale : 0,
  max: s.n > 0 ? s.max * scale : 0,
  recent: s.recent.map((x) => x * scale),
});

/** What the efficiency line needs of the job: it is shown for rigid jobs that have ended. */
export interface CfgJob {
  ended: boolean;
  elastic: boolean;
  nodes: number;
}

/** The seff-like line of a rigid job after its end: communication share per loop, the model's best size. */
function efficiencyView(cfg: JobCfg, job: CfgJob | undefined) {
  if (!job || !job.ended || job.elastic || job.nodes <= 0) return null;
  const e = efficiency(job.nodes, cfg.loops.filter((l) => l.iterations > 0));
  return e ? { nodes: e.nodes, commShare: e.commShare, mtct: Number.isFinite(e.mtct) ? e.mtct : null, bestNodes: e.bestNodes, loops: e.loops.map((l) => ({ key: l.key, commShare: l.commShare, mtct: Number.isFinite(l.mtct) ? l.mtct : null, bestNodes: l.bestNodes })) } : null;
}

/** An EPOP phase's name for a loop whose head is that phase's site (comm/cfg.ts). */
function phaseName(head: number, phases: readonly { pc: number; name: string }[]): string | null {
  const pc = phaseOfSite(head);
  if (pc === undefined) return null;
  return phases.find((p) => p.pc === pc)?.name ?? `pc ${pc}`;
}

/** The API's form of a job's CFG (times in ms); `phases` names the loops of an EPOP program. */
export function cfgView(cfg: JobCfg | undefined, monitor: string | undefined, job?: CfgJob, phases: readonly { pc: number; name: string }[] = []) {
  if (!cfg) return monitor ? { monitored: false, reason: monitor, ntasks: 0, current: null, loops: [], efficiency: null } : null;
  const ms = 1e-6;
  return {
    efficiency: efficiencyView(cfg, job),
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
