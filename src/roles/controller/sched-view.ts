/** How the pure scheduler sees a job: derived from its row and allocation. A blocked pending job is not seen. */
import { pendingView } from "../../sched/pending.ts";
import type { JobRuntime } from "./state.ts";

export function refreshSchedView(job: JobRuntime): void {
  const r = job.row;
  if (r.state === "PENDING") {
    if (job.blocked) {
      job.sched = {};
      return;
    }
    job.sched = { pending: pendingView(r) };
  } else {
    job.sched = { running: { id: r.id, nodes: job.nodes, expectedEnd: (r.startTime ?? r.submitTime) + r.timeLimit * 1000 } };
  }
}
