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

export const TERMINAL_STATES: ReadonlySet<string> = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "GONE"]);

export class ControllerLink {
  private channel: Channel<LauncherToController, ControllerToLauncher> | undefined;
  private readonly listeners = new Set<(s: JobStateMsg) => void>();
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
      onOpen: () => this.channel!.send({ t: "attach", jobId: this.jobId }),
      onMessage: (m) => {
        if (m.t === "error") return this.onError(`controller: ${m.message}`);
        if (m.jobId !== this.jobId) return;
        this.latest = m;
        for (const l of [...this.listeners]) l(m);
      },
    });
  }
}
