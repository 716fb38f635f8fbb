/** `ebb run` connections: they submit and follow their job, create its steps, report steps and releases. */
import { Refusal } from "../../domain/refusal.ts";
import { notYourJob, scopeMayActOn, type Scope } from "../../domain/scope.ts";
import { LauncherToController, PROTOCOL_REFUSED, type ControllerToLauncher } from "../../proto/launcher.ts";
import type { StepCreate, StepGrant } from "../../proto/requests.ts";
import { decode } from "../../proto/channel.ts";
import { protocolRefusal } from "../../proto/version.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { Jobs, Submitter } from "./jobs.ts";
import type { ClusterState, LauncherSession } from "./state.ts";
import type { StoreHealth } from "./storage.ts";
import { MAX_JSON_DEPTH } from "../../util/json.ts";

const log = logger("controller");

type ErrorMsg = Extract<ControllerToLauncher, { t: "error" }>;

/** What the HTTP API would answer: a refusal's code, message and field; anything else is ours. */
function errorOf(e: unknown, req?: number): ErrorMsg {
  if (e instanceof Refusal) return { t: "error", code: e.code, message: e.message, field: e.field, req };
  log.error("launcher request failed", { error: String(e) });
  return { t: "error", code: "internal", message: "internal error; see the controller's log", req };
}

export class LauncherHub {
  private readonly attached = new Map<LauncherSession, number>();
  /** Connections whose hello named this protocol version. */
  private readonly greeted = new WeakSet<LauncherSession>();

  constructor(
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly elastic: Elastic,
    private readonly submitter: (scope: Scope) => Submitter,
    private readonly health: StoreHealth,
  ) {}

  onMessage(conn: LauncherSession, scope: Scope, text: string | Buffer): void {
    const d = decode(LauncherToController, text, MAX_JSON_DEPTH);
    if (!d.ok) {
      conn.send({ t: "error", code: "invalid_request", message: `invalid message: ${d.error}` });
      return;
    }
    const msg = d.value;
    if (msg.t === "hello" || !this.greeted.has(conn)) {
      const why = msg.t === "hello" ? protocolRefusal("ebb run", msg.protocol, msg.version) : protocolRefusal("ebb run", undefined, undefined);
      if (!why) return void this.greeted.add(conn);
      log.warn(`refused a launcher from ${conn.remote}: ${why}`);
      conn.send({ t: "error", code: "protocol_version", message: why });
      conn.close(PROTOCOL_REFUSED, "protocol version");
      return;
    }
    if (msg.t === "submit") {
      let jobId: number;
      try {
        jobId = this.jobs.submit(msg.job, this.submitter(scope)).id;
      } catch (e) {
        return conn.send(errorOf(e));
      }
      conn.send({ t: "submitted", jobId });
      this.follow(conn, jobId);
      return;
    }
    if (!scopeMayActOn(scope, msg.jobId, this.jobs.row(msg.jobId))) {
      conn.send(errorOf(notYourJob(scope, msg.jobId), msg.t === "step.create" || msg.t === "adopt" || msg.t === "restart" ? msg.req : undefined));
      return;
    }
    const now = Date.now();
    switch (msg.t) {
      case "attach": {
        if (!this.follow(conn, msg.jobId)) return;
        if (msg.elastic && msg.stepId !== undefined) this.elastic.attach(msg.jobId, msg.stepId, conn, msg.tasks, msg.cred, msg.known);
        return;
      }
      case "step.create":
        return this.createStep(conn, msg.jobId, msg.req, msg.step);
      case "restart":
        try {
          const g = this.elastic.restartGrant(msg.jobId, msg.adaptId, now);
          conn.send({ t: "restart.grant", req: msg.req, ...g });
        } catch (e) {
          conn.send(errorOf(e, msg.req));
        }
        return;
      case "adopt":
        try {
          conn.send({ t: "adopt.grant", req: msg.req, cred: this.elastic.adoptCredential(msg.jobId, msg.stepId, msg.nodes) });
        } catch (e) {
          conn.send(errorOf(e, msg.req));
        }
        return;
      // Held in memory only: the resize's adapt.done records it.
      case "adapt.commit":
        this.elastic.committed(msg.jobId, msg.adaptId);
        return;
      // What the launcher reports is recorded now, or kept until the store takes writes again.
      case "adapt.done":
        return this.health.orLater(`adapt:${msg.jobId}:${msg.adaptId}`, () => this.elastic.done(msg.jobId, msg.adaptId, msg.ok, msg.times, msg.message, now, msg.tasks));
      case "cfg":
        this.elastic.cfgs.update(msg.jobId, msg);
        return;
      case "fault":
        return this.health.orLater(`fault:${msg.jobId}:${msg.node}`, () => {
          const job = this.state.jobs.get(msg.jobId);
          if (job && !this.elastic.fault(msg.jobId, msg.node, msg.reason, now, true)) this.jobs.finish(job, "NODE_FAIL", { reason: `node ${msg.node} failed: ${msg.reason}` }, now);
        });
      case "step.end":
        return this.health.orLater(`step:${msg.jobId}:${msg.stepId}`, () => this.jobs.stepEnded(msg.jobId, msg.stepId, msg.exitCode, msg.interrupted !== undefined, now));
      case "release":
        return this.health.orLater(`release:${msg.jobId}`, () => {
          const job = this.state.jobs.get(msg.jobId);
          if (job && job.row.kind === "alloc" && msg.interrupted) this.jobs.finish(job, "CANCELLED", { exitCode: msg.exitCode, reason: `ebb run was interrupted (${msg.interrupted})`, cleanup: "now" }, now);
          // An allocation's `ebb run`, or the step root of a command job on the controller's host.
          else if (job && (job.row.kind === "alloc" || this.jobs.hostsRoot(job.row))) this.jobs.exited(msg.jobId, msg.exitCode, msg.message, msg.lostNode, now);
          else if (job) log.warn("release of a job whose end its first node reports", { jobId: msg.jobId });
        });
    }
  }

  onClose(conn: LauncherSession): void {
    this.jobs.launcherClosed(conn);
    const jobId = this.attached.get(conn);
    this.attached.delete(conn);
    if (jobId !== undefined) this.jobs.removeLauncher(jobId, conn);
  }

  /** This connection follows `jobId`'s state from now on (and no other job's); false if the job is gone. */
  private follow(conn: LauncherSession, jobId: number): boolean {
    const prev = this.attached.get(conn);
    if (prev !== undefined) this.jobs.removeLauncher(prev, conn);
    if (!this.jobs.addLauncher(jobId, conn)) {
      // Ended (or purged from the history long ago): its final state, so the launcher stops.
      const row = this.jobs.row(jobId);
      conn.send({ t: "job.state", jobId, state: row?.state ?? "CANCELLED", reason: row ? (row.reason ?? `the job ended ${row.state}`) : "the job no longer exists", nodes: [] });
      return false;
    }
    this.attached.set(conn, jobId);
    this.jobs.notifyLaunchers(this.state.jobs.get(jobId)!);
    return true;
  }

  /** Answered now, or once new nodes are found (a step on new nodes, for PMI spawn), or once CPUs are free (an exact step: step.waiting first). */
  private createStep(conn: LauncherSession, jobId: number, req: number, step: StepCreate): void {
    const caller = { owner: conn, waiting: (message: string) => conn.send({ t: "step.waiting", req, message }) };
    new Promise<StepGrant>((resolve) => resolve(this.jobs.createStep(jobId, step, Date.now(), caller))).then(
      (grant) => conn.send({ t: "step.grant", req, grant }),
      (e: unknown) => conn.send(errorOf(e, req)),
    );
  }
}
