/** How the pure scheduler sees a job: derived from its row and allocation. A blocked pending job is not seen. */
import type { JobRuntime } from "./state.ts";

export function refreshSchedView(job: JobRuntime): void {
  const r = job.row;
  if (r.state === "PENDING") {
    if (job.blocked) {
      job.sched = {};
      return;
    }
    job.sched = {
      pending: {
        id: r.id,
        minNodes: r.minNodes,
        maxNodes: r.elastic ? r.nodes : r.maxNodes,
        timeLimit: r.timeLimit,
        submitTime: r.submitTime,
        elastic: r.elastic,
        // --nodes MIN-MAX: any size in the range (an elastic job starts at the size it asked for, or as its policy decides).
        ...(!r.elastic && r.minNodes < r.maxNodes ? { moldable: true } : {}),
        ...(r.exclude ? { exclude: r.exclude } : {}),
        ...(r.nodelist ? { nodelist: r.nodelist } : {}),
        ...(r.sizes ? { sizes: r.sizes } : {}),
      },
    };
  } else {
    job.sched = { running: { id: r.id, nodes: job.nodes, expectedEnd: (r.startTime ?? r.submitTime) + r.timeLimit * 1000 } };
  }
}
