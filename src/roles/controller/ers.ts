/**
 * The elastic part of the controller's one scheduling loop (`SchedulerLoop` calls it every
 * interval): it hands the same pure pass the simulator uses (sched/policies planPass) the
 * cluster's counts, the queue and every running job with its MTCT samples since its last
 * adaptation and what it measured at each size, then carries out the resizes the plan asks for
 * through the resize protocol. Every decision becomes an event with its reason; notes (why a job
 * was left alone) become events when their words change.
 *
 * Starting jobs: FCFS + EASY with moldable starts (the batch pass with node names) for ebb, easy
 * and fcfs; for the seeds' policies, the starts of the same plan whose resizes are carried out.
 */
import { ApiError } from "../../api/errors.ts";
import { planPass, POLICY_TABLE } from "../../sched/policies/index.ts";
import { limitRatio } from "../../sched/limits.ts";
import { measuredModel } from "../../sched/profile.ts";
import type { AdminLimits, ErsConfig } from "../../sched/config.ts";
import type { JobState, PassInput, PassPlan } from "../../sched/types.ts";
import type { JobStore } from "../../store/jobs.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

const log = logger("controller");

export class ElasticScheduler {
  private readonly lastNote = new Map<number, string>();

  constructor(
    private readonly state: ClusterState,
    private readonly store: JobStore,
    private readonly elastic: Elastic,
    readonly config: ErsConfig,
    private readonly limits: AdminLimits,
    private readonly sampleInterval: number,
  ) {}

  /** One pass of the pure scheduler over the cluster as it is now. */
  plan(now = Date.now()): { input: PassInput; plan: PassPlan } {
    const input = this.input(now);
    return { input, plan: planPass(input) };
  }

  /** Carries out a plan's resizes (each re-checked by the resize protocol) and records its notes. */
  carryOut({ input, plan }: { input: PassInput; plan: PassPlan }, now = Date.now()): void {
    for (const r of plan.resizes) {
      try {
        const job = input.running.find((j) => j.id === r.jobId);
        this.elastic.resize(r.jobId, r.to, `scheduler, ${r.rule}: ${r.reason}`, now, job ? limitRatio(job, r.to) : undefined);
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

  /** One elastic pass: plan with the pure scheduler, then act on the plan's resizes. */
  tick(now = Date.now()): void {
    this.carryOut(this.plan(now), now);
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
    // What it measured at each size it ran at: ReSHAPE's profile, APM's runtime model, and the
    // ratio a resize rescales its time limit by.
    const measured = r.elastic ? this.elastic.measured(r.id, interval * 1000) : [];
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
      profile: measured.length > 0 ? measured.map((p) => ({ nodes: p.nodes, iterTime: p.iterTime })) : undefined,
      // APM's policies model a job only by what it measured (the others read MTCT and the profile).
      model: this.config.policy.startsWith("apm-") ? measuredModel(measured) : undefined,
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
