/** `ebb run` connections: they follow their job's state and report steps and releases. */
import { decode } from "../../proto/channel.ts";
import { LauncherToController } from "../../proto/launcher.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { Jobs } from "./jobs.ts";
import type { ClusterState, LauncherSession } from "./state.ts";

const log = logger("controller");

export class LauncherHub {
  private readonly attached = new Map<LauncherSession, number>();

  constructor(
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly elastic: Elastic,
  ) {}

  onMessage(conn: LauncherSession, scope: "all" | number, text: string | Buffer): void {
    const d = decode(LauncherToController, text);
    if (!d.ok) {
      conn.send({ t: "error", message: `invalid message: ${d.error}` });
      return;
    }
    const msg = d.value;
    if (scope !== "all" && scope !== msg.jobId) {
      conn.send({ t: "error", message: `this token is for job ${scope}, not job ${msg.jobId}` });
      return;
    }
    switch (msg.t) {
      case "attach": {
        const prev = this.attached.get(conn);
        if (prev !== undefined) this.jobs.removeLauncher(prev, conn);
        if (!this.jobs.addLauncher(msg.jobId, conn)) {
          conn.send({ t: "job.state", jobId: msg.jobId, state: "GONE", reason: "the job is not active", nodes: [] });
          return;
        }
        this.attached.set(conn, msg.jobId);
        if (msg.elastic && msg.stepId !== undefined) this.elastic.attach(msg.jobId, msg.stepId, conn, msg.tasks);
        this.jobs.notifyLaunchers(this.state.jobs.get(msg.jobId)!);
        return;
      }
      case "adapt.done":
        this.elastic.done(msg.jobId, msg.adaptId, msg.ok, msg.times, msg.message);
        return;
      case "step.end":
        this.jobs.stepEnded(msg.jobId, msg.stepId, msg.exitCode);
        return;
      case "release": {
        const job = this.state.jobs.get(msg.jobId);
        if (job && job.row.kind === "alloc") this.jobs.exited(msg.jobId, msg.exitCode, msg.message, msg.lostNode);
        else if (job) log.warn("release of a job that is not an allocation", { jobId: msg.jobId });
        return;
      }
    }
  }

  onClose(conn: LauncherSession): void {
    const jobId = this.attached.get(conn);
    this.attached.delete(conn);
    if (jobId !== undefined) this.jobs.removeLauncher(jobId, conn);
  }
}
