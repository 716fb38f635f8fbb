/**
 * A launcher's tie to the controller for one job: the /v1/launcher WebSocket, which submits the job
 * (or attaches to it; again after every reconnect), creates its steps, brings the job's state and
 * resize orders, and takes step and release reports.
 */
import { ApiClientError, connectionFailure, type ApiClient } from "../../api/client.ts";
import { ControllerToLauncher, type LauncherToController } from "../../proto/launcher.ts";
import type { JobSubmit, StepCreate, StepGrant } from "../../proto/requests.ts";
import { Channel } from "../../proto/channel.ts";
import { FRAME_MAX } from "../../proto/frames.ts";
import type { AdoptCredential, NodeRef, StepCredential } from "../../proto/common.ts";
import { PROTOCOL_VERSION } from "../../proto/version.ts";
import { VERSION } from "../../util/version.ts";

export type JobStateMsg = Extract<ControllerToLauncher, { t: "job.state" }>;
export type ReallocMsg = Extract<ControllerToLauncher, { t: "realloc" }>;
/** The step a checkpoint-restart adaptation restarts the world in (docs/adaptation.md §12). */
export type RestartGrant = Omit<Extract<ControllerToLauncher, { t: "restart.grant" }>, "t" | "req">;
type ErrorMsg = Extract<ControllerToLauncher, { t: "error" }>;


interface Pending<T> {
  resolve(value: T): void;
  reject(e: Error): void;
  /** A step.create whose step waits for CPUs (step.waiting). */
  onWaiting?(message: string): void;
}

const failure = (m: ErrorMsg) => new ApiClientError(m.message, 400, m.code ?? "error", m.field);

export class ControllerLink {
  private channel: Channel<LauncherToController, ControllerToLauncher> | undefined;
  private readonly listeners = new Set<(s: JobStateMsg) => void>();
  private realloc: ((m: ReallocMsg) => void) | undefined;
  /** Nodes a coming resize adds: their step-tree connections may open now. */
  private links: ((nodes: NodeRef[]) => void) | undefined;
  /** The job's elastic step this launcher runs and its world's ranks per node, announced at every (re)attach. */
  private elasticStep: { stepId: number; cred: StepCredential; tasks: () => number[] } | undefined;
  /** A submit sent and not yet answered. */
  private submission: (Pending<void> & { job: JobSubmit; sent: boolean }) | undefined;
  private readonly requests = new Map<number, Pending<StepGrant> | Pending<AdoptCredential> | Pending<RestartGrant>>();
  private nextRequest = 0;
  latest: JobStateMsg | undefined;
  /** The controller refused this launcher's protocol version: every wait fails with this. */
  private refusal: ApiClientError | undefined;
  private readonly stateWaiters = new Set<(e: Error) => void>();
  /**
   * The last adaptation's commit and end as sent: said again after every re-attach, since a
   * controller killed before it read them restarts with the adaptation open (it ignores a report
   * of an adaptation that is not its open one).
   */
  private lastAdaptation: { adaptId: number; sent: LauncherToController[] } | undefined;
  /** The last adaptation whose order (realloc) came: said at every attach, so that a lost one is known. */
  private knownOrder = 0;

  /** Follows job `jobId`, which exists already (a step inside a job); the connection opens on first use. */
  constructor(
    readonly client: ApiClient,
    private id: number | undefined,
    private readonly onError: (message: string) => void = () => {},
  ) {}

  /** Submits `job` on a new connection and follows it: resolves once the controller has made it. */
  static submit(client: ApiClient, job: JobSubmit, onError?: (message: string) => void): Promise<ControllerLink> {
    const link = new ControllerLink(client, undefined, onError);
    return new Promise<void>((resolve, reject) => {
      link.submission = { job, sent: false, resolve, reject };
      link.open();
    }).then(
      () => link,
      (e: Error) => {
        link.close();
        throw e;
      },
    );
  }

  get jobId(): number {
    if (this.id === undefined) throw new Error("the job has not been submitted yet");
    return this.id;
  }

  /** Follow the job's state (opens the channel). */
  onState(listener: (s: JobStateMsg) => void): () => void {
    this.open();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves at the next state message; rejects if the controller refuses this launcher. */
  nextState(): Promise<JobStateMsg> {
    if (this.refusal) return Promise.reject(this.refusal);
    return new Promise((resolve, reject) => {
      const fail = (e: Error) => {
        off();
        reject(e);
      };
      const off = this.onState((s) => {
        off();
        this.stateWaiters.delete(fail);
        resolve(s);
      });
      this.stateWaiters.add(fail);
    });
  }

  /**
   * Take the job's resize orders for `stepId` (its elastic step), whose world `tasks` describes;
   * `cred` is the step's credential, which tells a restarted controller what joining ranks' credentials cover.
   */
  takeResizes(stepId: number, cred: StepCredential, tasks: () => number[], onRealloc: (m: ReallocMsg) => void, onLinks?: (nodes: NodeRef[]) => void): void {
    this.elasticStep = { stepId, cred, tasks };
    this.realloc = onRealloc;
    this.links = onLinks;
    if (this.channel) this.channel.send(this.attachMessage());
    else this.open();
  }

  /** The elastic step is another one now (a checkpoint-restart world restarted in it): attach again with it. */
  elasticStepIs(stepId: number, cred: StepCredential): void {
    if (!this.elasticStep) return;
    this.elasticStep = { ...this.elasticStep, stepId, cred };
    if (this.channel) this.channel.send(this.attachMessage());
  }

  private attachMessage(): LauncherToController {
    const e = this.elasticStep;
    return e === undefined ? { t: "attach", jobId: this.jobId } : { t: "attach", jobId: this.jobId, stepId: e.stepId, elastic: true, tasks: e.tasks(), cred: e.cred, known: this.knownOrder };
  }

  /** Every rank of resize `adaptId` committed: a node lost from now is the new world's (§7.8). */
  adaptCommitted(adaptId: number): void {
    this.sendAdaptation(adaptId, { t: "adapt.commit", jobId: this.jobId, adaptId });
  }

  /** An adaptation ended; a commit says the world's ranks per node after it. */
  adaptDone(adaptId: number, ok: boolean, times: Record<string, number>, message?: string, tasks?: number[]): void {
    this.sendAdaptation(adaptId, { t: "adapt.done", jobId: this.jobId, adaptId, ok, times, message, tasks });
  }

  private sendAdaptation(adaptId: number, msg: LauncherToController): void {
    if (this.lastAdaptation?.adaptId !== adaptId) this.lastAdaptation = { adaptId, sent: [] };
    this.lastAdaptation.sent.push(msg);
    this.send(msg);
  }

  /** The elastic step lost `node`: the controller answers with a fault realloc or ends the job. */
  fault(node: string, reason: string): void {
    this.send({ t: "fault", jobId: this.jobId, node, reason });
  }

  /**
   * A new step of the job (POST /v1/jobs/{id}/steps), asked on this connection. An exact step may
   * wait for CPUs: `onWaiting` hears the controller's step.waiting before the grant comes.
   */
  createStep(step: StepCreate, onWaiting?: (message: string) => void): Promise<StepGrant> {
    if (this.refusal) return Promise.reject(this.refusal);
    const req = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.requests.set(req, { resolve, reject, onWaiting });
      this.send({ t: "step.create", jobId: this.jobId, req, step });
    });
  }

  /** The step to restart a checkpoint-restart world in, once its old ranks wrote their parts (adaptation `adaptId`). */
  restartGrant(adaptId: number): Promise<RestartGrant> {
    if (this.refusal) return Promise.reject(this.refusal);
    const req = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.requests.set(req, { resolve, reject });
      this.send({ t: "restart", jobId: this.jobId, adaptId, req });
    });
  }

  /** A credential to re-attach `nodes` of step `stepId` (children of a lost inner node of its launch tree). */
  adoptCredential(stepId: number, nodes: string[]): Promise<AdoptCredential> {
    if (this.refusal) return Promise.reject(this.refusal);
    const req = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.requests.set(req, { resolve, reject });
      this.send({ t: "adopt", jobId: this.jobId, stepId, req, nodes });
    });
  }

  /** A step's CFG, merged over its launch tree. */
  cfg(report: Omit<Extract<LauncherToController, { t: "cfg" }>, "t" | "jobId">): void {
    this.send({ t: "cfg", jobId: this.jobId, ...report });
  }

  stepEnded(stepId: number, exitCode: number, message?: string, interrupted?: string): void {
    this.send({ t: "step.end", jobId: this.jobId, stepId, exitCode, message, interrupted });
  }

  release(exitCode: number, message?: string, lostNode?: string, interrupted?: string): void {
    this.send({ t: "release", jobId: this.jobId, exitCode, message, lostNode, interrupted });
  }

  close(): void {
    this.channel?.close();
  }

  private send(msg: LauncherToController): void {
    this.open();
    this.channel!.send(msg);
  }

  private open(): void {
    if (this.channel) return;
    this.channel = new Channel<LauncherToController, ControllerToLauncher>({
      url: this.client.wsUrl("/v1/launcher"),
      token: this.client.token,
      tls: this.client.tls,
      frameMax: FRAME_MAX,
      schema: ControllerToLauncher,
      reconnect: { maxDelayMs: 1000 },
      onOpen: () => this.opened(),
      onClose: (reason) => this.lost(reason),
      onMessage: (m) => this.receive(m),
    });
  }

  private opened(): void {
    // Pipelined with what follows: a refusal comes back as an error, before the connection closes.
    this.channel!.send({ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION });
    const s = this.submission;
    if (!s) {
      this.channel!.send(this.attachMessage());
      for (const msg of this.lastAdaptation?.sent ?? []) this.channel!.send(msg);
      return;
    }
    s.sent = true;
    this.channel!.send({ t: "submit", job: s.job });
  }

  /** The controller speaks another protocol version: no retry, and everything waiting fails with its reason. */
  private refused(e: ApiClientError): void {
    this.refusal = e;
    this.channel?.close();
    const waiting = [...(this.submission ? [this.submission] : []), ...this.requests.values(), ...[...this.stateWaiters].map((reject) => ({ reject }))];
    this.submission = undefined;
    this.requests.clear();
    this.stateWaiters.clear();
    for (const w of waiting) w.reject(e);
    // Nobody waits to print it (a refusal after a reconnect): say it here.
    if (waiting.length === 0) this.onError(`controller: ${e.message}`);
  }

  /** Requests in flight lose their answers with the connection. */
  private lost(reason: string): void {
    const s = this.submission;
    this.submission = undefined;
    // Submitting again after a drop could make the job twice.
    if (s) s.reject(s.sent ? new ApiClientError("lost the controller while it took the job; see 'ebb queue' for whether it did", 0, "unreachable") : connectionFailure(this.client.url, reason, this.client.ca));
    const error = new ApiClientError(`lost the controller (${reason})`, 0, "unreachable");
    for (const r of this.requests.values()) r.reject(error);
    this.requests.clear();
  }

  private receive(m: ControllerToLauncher): void {
    switch (m.t) {
      case "submitted":
        if (!this.submission) return;
        this.id = m.jobId;
        this.submission.resolve();
        this.submission = undefined;
        return;
      case "step.waiting":
        this.requests.get(m.req)?.onWaiting?.(m.message);
        return;
      case "step.grant":
        (this.requests.get(m.req) as Pending<StepGrant> | undefined)?.resolve(m.grant);
        this.requests.delete(m.req);
        return;
      case "restart.grant": {
        const { t: _t, req: _req, ...grant } = m;
        (this.requests.get(m.req) as Pending<RestartGrant> | undefined)?.resolve(grant);
        this.requests.delete(m.req);
        return;
      }
      case "adopt.grant":
        (this.requests.get(m.req) as Pending<AdoptCredential> | undefined)?.resolve(m.cred);
        this.requests.delete(m.req);
        return;
      case "error": {
        // A refusal of this connection itself: trying again would be refused alike.
        if (m.code === "protocol_version" || m.code === "too_many_launchers") return this.refused(failure(m));
        const pending = m.req !== undefined ? this.requests.get(m.req) : this.submission;
        if (!pending) return this.onError(`controller: ${m.message}`);
        if (m.req !== undefined) this.requests.delete(m.req);
        else this.submission = undefined;
        return pending.reject(failure(m));
      }
      case "links":
        if (m.jobId === this.id) this.links?.(m.nodes);
        return;
      case "realloc":
        if (m.jobId !== this.id) return;
        this.knownOrder = Math.max(this.knownOrder, m.adaptId);
        this.realloc?.(m);
        return;
      case "job.state":
        if (m.jobId !== this.id) return;
        this.latest = m;
        for (const l of [...this.listeners]) l(m);
        return;
    }
  }
}
