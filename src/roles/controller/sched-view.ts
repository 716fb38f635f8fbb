/** How the pure scheduler sees a job: derived from its row and allocation. */
import type { JobRuntime } from "./state.ts";

export function refreshSchedView(job: JobRuntime): void {
  const r = job.row;
  if (r.state === "PENDING") {
    job.sched = { pending: { id: r.id, minNodes: r.minNodes, maxNodes: r.elastic ? r.nodes : r.maxNodes, timeLimit: r.timeLimit, submitTime: r.submitTime } };
  } else {
    job.sched = { running: { id: r.id, nodes: job.nodes, expectedEnd: (r.startTime ?? r.submitTime) + r.timeLimit * 1000 } };
  }
}
