/**
 * The Elastic Runtime Scheduler in the live controller: every interval it hands the same pure
 * pass the simulator uses (sched/policies planPass) the cluster's counts, the queue and every
 * running job with its MTCT samples since its last adaptation, then carries out the resizes the
 * plan asks for through the resize protocol. Every decision becomes an event with its reason;
 * notes (why a job was left alone) become events when their words change.
 *
 * Starting jobs stays with the event-driven batch pass, which runs whenever nodes free up
 * (including those a shrink of rule 1 frees for a waiting job): FCFS + EASY with moldable starts
 * for ebb, easy and fcfs; for the seeds' policies, the starts of the same pure pass (`starts`).
 */
import { ApiError } from "../../api/errors.ts";
import { planPass, POLICY_TABLE } from "../../sched/policies/index.ts";
import type { AdminLimits, ErsConfig } from "../../sched/config.ts";
import type { CountStart, JobState, PassInput } from "../../sched/types.ts";
import type { JobStore } from "../../store/jobs.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

const log = logger("controller");

export class ElasticScheduler {
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly lastNote = new Map<number, string>();

  constructor(
    private readonly state: ClusterState,
    private readonly store: JobStore,
    private readonly elastic: Elastic,
    readonly config: ErsConfig,
    private readonly limits: AdminLimits,
    private readonly sampleInterval: number,
  ) {}

  start(): void {
    if (!POLICY_TABLE[this.config.policy].resizes) return;
    this.timer = setInterval(() => this.tick(), this.config.interval * 1000);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One elastic pass: plan with the pure scheduler, then act on the plan's resizes. */
  tick(now = Date.now()): void {
    const plan = planPass(this.input(now));
    for (const r of plan.resizes) {
      try {
        this.elastic.resize(r.jobId, r.to, `scheduler, ${r.rule}: ${r.reason}`, now);
      } catch (e) {
        const why = e instanceof ApiError ? e.message : (e as Error).message;
        this.note(r.jobId, `wanted ${r.rule} ${r.from} -> ${r.to} nodes but could not: ${why}`, now);
      }
    }
    const byJob = new Map<number, string[]>();
    for (const n of plan.notes) byJob.set(n.jobId, [...(byJob.get(n.jobId) ?? []), n.text]);
    for (const [jobId, texts] of byJob) this.note(jobId, texts.join("; "), now);
    for (const id of this.lastNote.keys()) if (!this.state.jobs.has(id)) this.lastNote.delete(id);
  }

  /** The jobs the policy would start now (for the seeds' policies, whose starts differ from EASY's). */
  starts(now = Date.now()): CountStart[] {
    return planPass(this.input(now)).starts;
  }

  private input(now: number): PassInput {
    const running: JobState[] = [];
    const pending = [];
    for (const job of this.state.jobs.values()) {
      if (job.sched.pending) pending.push({ ...job.sched.pending, elastic: job.row.elastic });
      else if (job.row.startTime !== null) running.push(this.jobState(job, now));
    }
    return { now, ...this.state.nodeCounts(now), running, pending, config: this.config, limits: this.limits };
  }

  private jobState(job: JobRuntime, now: number): JobState {
    const r = job.row;
    const e = job.elastic;
    // The first window after a start or an adaptation holds warm-up and connection set-up: skipped.
    const interval = r.sampleInterval ?? this.sampleInterval;
    const since = (e?.samplesSince ?? r.startTime ?? 0) + interval * 1000;
    // Policies that do not model MTCT get no samples, and no query per job.
    const samples = r.elastic && POLICY_TABLE[this.config.policy].mtct ? this.elastic.mtct(r.id, interval, since, now).samples : [];
    return {
      id: r.id,
      nodes: job.nodes.length,
      minNodes: r.minNodes,
      maxNodes: r.maxNodes,
      // Only a job whose elastic step is running with its launcher attached can be resized.
      elastic: r.elastic && e?.launcher !== undefined && e.tasks !== undefined,
      submitTime: r.submitTime,
      startTime: r.startTime!,
      timeLimit: r.timeLimit,
      // The batch pass's estimate: start + limit, or sooner when an EPOP program's progress says so.
      expectedEnd: job.sched.running?.expectedEnd,
      samples: samples.map((s) => ({ time: s.time, mtct: s.mtct })),
      adapting: r.state === "ADAPTING",
      resizingTo: e?.adapting?.to,
      lastAdaptEnd: e?.lastAdaptEnd,
      adaptCost: e?.adaptCostMs === undefined ? undefined : e.adaptCostMs / 1000,
      overrides: r.elasticSettings ?? undefined,
      ...(r.sizes ? { sizes: r.sizes } : {}),
    };
  }

  /** A note becomes an event when it says something new: the same words with new numbers do not. */
  private note(jobId: number, text: string, now: number): void {
    const gist = text.replace(/\d+(\.\d+)?/g, "#");
    if (this.lastNote.get(jobId) === gist || !this.state.jobs.has(jobId)) return;
    this.lastNote.set(jobId, gist);
    this.store.addEvent(jobId, now, "scheduler", text);
    log.debug(`job ${jobId}: ${text}`);
  }
}
