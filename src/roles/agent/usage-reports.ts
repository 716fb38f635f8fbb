/**
 * A job's usage on this node (job.usage), kept until it has surely reached the controller: sent
 * while the channel was open, and the job no longer the node's (so no later report replaces it).
 * A reconnect sends again what is kept, as job.exit is. At most 1,024 are kept, the oldest dropped.
 */
import type { AgentToController } from "../../proto/agent.ts";
import type { JobUsage } from "./cgroup-limits.ts";

type UsageMessage = Extract<AgentToController, { t: "job.usage" }>;

const KEPT_MAX = 1024;

export class UsageReports {
  private readonly kept = new Map<number, { msg: UsageMessage; sent: boolean }>();

  constructor(
    /** Sends on the controller's channel; false when it is closed. */
    private readonly send: (msg: UsageMessage) => boolean,
    /** Whether the job is still one of the node's. */
    private readonly held: (jobId: number) => boolean,
  ) {}

  report(jobId: number, usage: JobUsage): void {
    const msg: UsageMessage = { t: "job.usage", jobId, ...usage };
    this.kept.delete(jobId);
    this.keep(msg, this.send(msg));
  }

  /** After a reconnect: whatever may not have arrived, again. */
  resend(): void {
    for (const { msg } of [...this.kept.values()]) this.keep(msg, this.send(msg));
  }

  /** The job left the node: a report already sent is final. */
  left(jobId: number): void {
    if (this.kept.get(jobId)?.sent) this.kept.delete(jobId);
  }

  private keep(msg: UsageMessage, sent: boolean): void {
    if (sent && !this.held(msg.jobId)) return void this.kept.delete(msg.jobId);
    this.kept.set(msg.jobId, { msg, sent });
    if (this.kept.size > KEPT_MAX) this.kept.delete(this.kept.keys().next().value!);
  }
}
