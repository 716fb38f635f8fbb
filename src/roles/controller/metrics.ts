/**
 * The controller's Prometheus metrics: counters and histograms recorded as things happen (jobs
 * started and ended, submits, scheduling passes, adaptations, SQLite commits), and gauges read
 * from the cluster state at each scrape (jobs and nodes by state, the queue, elastic jobs' sizes
 * and MTCT, agents' heartbeat ages, whether the database takes writes), and the process's own
 * (CPU, memory, file descriptors, event-loop lag).
 */
import { Counter, exposition, FAST_BUCKETS, Histogram, SLOW_BUCKETS, type Family } from "../../util/prometheus.ts";
import { ACTIVE_STATES, FINAL_STATES } from "../../domain/job.ts";
import type { AdaptationEnd } from "./elastic.ts";
import type { ClusterState, JobRuntime } from "./state.ts";
import { ProcessMetrics } from "./process-metrics.ts";
import { nodeView } from "./views.ts";
import { HOST_STATES } from "../../domain/host-state.ts";

const NODE_STATES = ["IDLE", "ALLOCATED", "COMPLETING", "DOWN", "UNKNOWN"] as const;

export interface MetricsSources {
  state: ClusterState;
  version: string;
  /** The latest MTCT of a running elastic job (null before its first samples). */
  mtct(job: JobRuntime): number | null;
  /** Whether the database takes writes, and how many reports wait until it does. */
  store: { readonly writable: boolean; readonly deferred: number };
}

export class ControllerMetrics {
  readonly started = new Counter("ebb_jobs_started_total", "Jobs started since the controller started");
  readonly ended = new Counter("ebb_jobs_ended_total", "Jobs ended since the controller started, by final state");
  readonly adaptations = new Counter("ebb_adaptations_total", "Adaptations ended since the controller started, by direction (grow, shrink) and outcome (committed, failed)");
  readonly submit = new Histogram("ebb_submit_duration_seconds", "Time to accept a submission, through the HTTP API or a launcher's WebSocket (checks, SQLite, queueing)", FAST_BUCKETS).zero();
  readonly pass = new Histogram("ebb_scheduling_pass_duration_seconds", "Duration of one batch scheduling pass", FAST_BUCKETS).zero();
  readonly adaptDuration = new Histogram("ebb_adaptation_duration_seconds", "Adaptations from the realloc order to the commit (or the failure), by direction", SLOW_BUCKETS);
  readonly blocked = new Histogram("ebb_adaptation_blocked_seconds", "Time the preexisting ranks of a committed adaptation were held: from their agreement on the iteration to the commit", SLOW_BUCKETS).zero();
  /** CPU, memory, file descriptors, start time, event-loop lag: its timer runs from `start()` to `stop()`. */
  readonly process = new ProcessMetrics();
  readonly commit = new Histogram("ebb_sqlite_commit_duration_seconds", "Duration of the controller's SQLite writes, commit included: each transaction, and each single statement run outside one (its own transaction)", FAST_BUCKETS).zero();

  constructor(private readonly src: MetricsSources) {
    this.started.zero({});
    for (const s of FINAL_STATES) this.ended.zero({ state: s });
    for (const direction of ["grow", "shrink"]) {
      this.adaptDuration.zero({ direction });
      for (const outcome of ["committed", "failed"]) this.adaptations.zero({ direction, outcome });
    }
  }

  jobStarted(): void {
    this.started.inc();
  }

  jobEnded(job: JobRuntime): void {
    this.ended.inc({ state: job.row.state });
  }

  adapted(a: AdaptationEnd): void {
    const direction = a.to > a.from ? "grow" : "shrink";
    this.adaptations.inc({ direction, outcome: a.ok ? "committed" : "failed" });
    const t = a.times;
    const start = t.realloc ?? a.requestedAt;
    const end = (a.ok ? t.committed : undefined) ?? t.ended;
    if (end !== undefined) this.adaptDuration.observe(Math.max(0, end - start) / 1000, { direction });
    if (a.ok && t.agreed !== undefined && t.committed !== undefined) this.blocked.observe(Math.max(0, t.committed - t.agreed) / 1000);
  }

  /** The whole exposition, the gauges read now. */
  render(now = Date.now()): string {
    const { state } = this.src;
    const byState = new Map<string, number>(ACTIVE_STATES.map((s) => [s, 0]));
    let oldest: number | undefined;
    const elasticNodes: Family["samples"] = [];
    const elasticMtct: Family["samples"] = [];
    for (const j of state.jobs.values()) {
      byState.set(j.row.state, (byState.get(j.row.state) ?? 0) + 1);
      if (j.row.state === "PENDING") oldest = Math.min(oldest ?? j.row.submitTime, j.row.submitTime);
      else if (j.row.elastic) {
        const labels = { job: j.row.id, name: j.row.name };
        elasticNodes.push({ labels, value: j.nodes.length });
        const m = this.src.mtct(j);
        if (m !== null) elasticMtct.push({ labels, value: m });
      }
    }
    const nodes = new Map<string, number>(NODE_STATES.map((s) => [s, 0]));
    const heartbeat: Family["samples"] = [];
    const hostStates: Family["samples"] = [];
    const hostInputs: Family["samples"] = [];
    for (const n of state.nodes.values()) {
      const v = nodeView(n, now);
      nodes.set(v.state, (nodes.get(v.state) ?? 0) + 1);
      if (n.session) heartbeat.push({ labels: { node: n.row.name }, value: Math.max(0, now - n.lastSeen) / 1000 });
      for (const s of HOST_STATES) hostStates.push({ labels: { node: n.row.name, state: s }, value: v.host.state === s ? 1 : 0 });
      for (const [input, value] of Object.entries(v.host.inputs)) hostInputs.push({ labels: { node: n.row.name, input }, value });
    }
    const { upNodes, idleNodes } = state.nodeCounts(now);
    const gauge = (name: string, help: string, samples: Family["samples"]): Family => ({ name, help, type: "gauge", samples });
    return exposition([
      gauge("ebb_info", "The controller's version", [{ labels: { version: this.src.version }, value: 1 }]),
      gauge("ebb_jobs", "Active jobs by state (ended jobs: ebb_jobs_ended_total)", [...byState].map(([s, value]) => ({ labels: { state: s }, value }))),
      gauge("ebb_queue_length", "Pending jobs", [{ value: byState.get("PENDING") ?? 0 }]),
      gauge("ebb_oldest_pending_age_seconds", "How long the oldest pending job has waited (0 with none)", [{ value: oldest === undefined ? 0 : Math.max(0, now - oldest) / 1000 }]),
      gauge("ebb_nodes", "Nodes by state", [...nodes].map(([s, value]) => ({ labels: { state: s }, value }))),
      gauge("ebb_nodes_allocated", "Schedulable nodes a job holds", [{ value: upNodes - idleNodes }]),
      gauge("ebb_nodes_idle", "Schedulable nodes no job holds", [{ value: idleNodes }]),
      this.started.family(),
      this.ended.family(),
      this.submit.family(),
      this.pass.family(),
      this.adaptations.family(),
      this.adaptDuration.family(),
      this.blocked.family(),
      gauge("ebb_elastic_job_nodes", "Nodes each running elastic job holds now", elasticNodes),
      gauge("ebb_elastic_job_mtct", "Latest MTCT (communication over computation time) of each running elastic job", elasticMtct),
      this.commit.family(),
      gauge("ebb_node_host_state", "1 for each node's host state as its agent's rules judge it (free, busy, overloaded, owner), 0 for the others", hostStates),
      gauge("ebb_node_host_input", "Each node's host-rule inputs as its agent last reported them, smoothed (cpu.other, load1, psi.mem, net.bytes, users, cmd.NAME...)", hostInputs),
      gauge("ebb_agent_heartbeat_age_seconds", "Time since each connected agent was last heard from", heartbeat),
      gauge("ebb_store_writable", "1 while the controller's database takes writes; 0 while its disk is full or read-only (writes answer 503, see GET /v1/health)", [{ value: this.src.store.writable ? 1 : 0 }]),
      gauge("ebb_store_deferred_writes", "Reports (jobs' ends, node registrations...) kept in memory until the database takes writes again", [{ value: this.src.store.deferred }]),
      ...this.process.families(),
    ]);
  }
}
