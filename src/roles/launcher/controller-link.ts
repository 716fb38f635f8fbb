/**
 * A launcher's ties to the controller for one job: HTTP for step grants, and the /v1/launcher
 * WebSocket (opened on first use, re-attached after reconnects) for the job's state and for step
 * and release reports.
 */
import type { ApiClient } from "../../api/client.ts";
import type { StepCreate, StepGrant } from "../../api/schemas.ts";
import { Channel } from "../../proto/channel.ts";
import { ControllerToLauncher, type LauncherToController } from "../../proto/launcher.ts";

export type JobStateMsg = Extract<ControllerToLauncher, { t: "job.state" }>;
export type ReallocMsg = Extract<ControllerToLauncher, { t: "realloc" }>;

export const TERMINAL_STATES: ReadonlySet<string> = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "GONE"]);

export class ControllerLink {
  private channel: Channel<LauncherToController, ControllerToLauncher> | undefined;
  private readonly listeners = new Set<(s: JobStateMsg) => void>();
  private realloc: ((m: ReallocMsg) => void) | undefined;
  /** The job's elastic step this launcher runs and its world's ranks per node, announced at every (re)attach. */
  private elasticStep: { stepId: number; tasks: () => number[] } | undefined;
  latest: JobStateMsg | undefined;

  constructor(
    readonly client: ApiClient,
    readonly jobId: number,
    private readonly onError: (message: string) => void = () => {},
  ) {}

  /** Follow the job's state (opens the channel). */
  onState(listener: (s: JobStateMsg) => void): () => void {
    this.open();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves at the next state message. */
  nextState(): Promise<JobStateMsg> {
    return new Promise((resolve) => {
      const off = this.onState((s) => {
        off();
        resolve(s);
      });
    });
  }

  /** Take the job's resize orders for `stepId` (its elastic step), whose world `tasks` describes. */
  takeResizes(stepId: number, tasks: () => number[], onRealloc: (m: ReallocMsg) => void): void {
    this.elasticStep = { stepId, tasks };
    this.realloc = onRealloc;
    if (this.channel) this.channel.send(this.attachMessage());
    else this.open();
  }

  private attachMessage(): LauncherToController {
    const e = this.elasticStep;
    return e === undefined ? { t: "attach", jobId: this.jobId } : { t: "attach", jobId: this.jobId, stepId: e.stepId, elastic: true, tasks: e.tasks() };
  }

  adaptDone(adaptId: number, ok: boolean, times: Record<string, number>, message?: string): void {
    this.send({ t: "adapt.done", jobId: this.jobId, adaptId, ok, times, message });
  }

  createStep(req: StepCreate): Promise<StepGrant> {
    return this.client.createStep(this.jobId, req);
  }

  stepEnded(stepId: number, exitCode: number, message?: string): void {
    this.send({ t: "step.end", jobId: this.jobId, stepId, exitCode, message });
  }

  release(exitCode: number, message?: string, lostNode?: string): void {
    this.send({ t: "release", jobId: this.jobId, exitCode, message, lostNode });
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
      schema: ControllerToLauncher,
      reconnect: { maxDelayMs: 1000 },
      onOpen: () => this.channel!.send(this.attachMessage()),
      onMessage: (m) => {
        if (m.t === "error") return this.onError(`controller: ${m.message}`);
        if (m.jobId !== this.jobId) return;
        if (m.t === "realloc") return this.realloc?.(m);
        this.latest = m;
        for (const l of [...this.listeners]) l(m);
      },
    });
  }
}
