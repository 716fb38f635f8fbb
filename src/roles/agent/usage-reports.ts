/**
 * A job's usage on this node (job.usage), kept until it has surely reached the controller: sent
 * while the channel was open, and the job no longer the node's (so no later report replaces it).
 * A reconnect sends again what is kept, as job.exit is. At most 1,024 are kept, the oldest dropped.
 * A command job whose launcher runs here sends its exit from here just after its last local
 * process ends: its usage waits for that exit and goes inside it (`atExit`, job.exit's `usage`),
 * one message for both, not a job.usage of its own a moment before. The exit is resent until the
 * controller has it, so its usage is too.
 */
import type { AgentToController } from "../../proto/agent.ts";
import type { JobUsage } from "./cgroup-limits.ts";

type UsageMessage = Extract<AgentToController, { t: "job.usage" }>;

const KEPT_MAX = 1024;

export class UsageReports {
  private readonly kept = new Map<number, { msg: UsageMessage; sent: boolean }>();
  /** Usage waiting for its job's exit (reportAtExit), at most KEPT_MAX. */
  private readonly atExit = new Map<number, JobUsage>();

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

  /** As report, but sent inside the job's exit (takeAtExit); an OOM kill goes at once (it may end the job). */
  reportAtExit(jobId: number, usage: JobUsage): void {
    if (usage.oomKills > 0) return this.report(jobId, usage);
    this.atExit.set(jobId, usage);
    if (this.atExit.size > KEPT_MAX) this.flush(this.atExit.keys().next().value!);
  }

  /** The job's exit is about to be sent: the usage held for it (reportAtExit), which goes inside it, if any. */
  takeAtExit(jobId: number): JobUsage | undefined {
    const usage = this.atExit.get(jobId);
    this.atExit.delete(jobId);
    return usage;
  }

  /** The job's job.cleaned is about to be sent: the usage held for its exit goes first, on its own. */
  flush(jobId: number): void {
    const usage = this.atExit.get(jobId);
    if (!usage) return;
    this.atExit.delete(jobId);
    this.report(jobId, usage);
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
