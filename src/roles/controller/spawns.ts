/**
 * Requests for new nodes from running jobs (PMI spawn): served from idle nodes before the queue
 * is scheduled, each waiting at most its own limit. Nodes are taken in name order until their
 * cpus cover the tasks, so children are not oversubscribed.
 */
import { ApiError } from "../../api/errors.ts";
import type { ClusterState } from "./state.ts";

interface Waiter {
  jobId: number;
  tasks: number;
  /** Takes the nodes, synchronously, before anything else can be scheduled on them. */
  take(nodes: string[]): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class SpawnQueue {
  private readonly waiters: Waiter[] = [];

  constructor(
    private readonly state: ClusterState,
    private readonly schedule: () => void,
  ) {}

  get waiting(): number {
    return this.waiters.length;
  }

  /** Waits for idle nodes for `tasks` processes; `grant` runs the moment they are found. */
  request<T>(jobId: number, tasks: number, waitMs: number, grant: (nodes: string[]) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const w: Waiter = {
        jobId,
        tasks,
        take: (nodes) => {
          try {
            resolve(grant(nodes));
          } catch (e) {
            reject(e);
          }
        },
        reject,
        timer: setTimeout(() => {
          this.drop(w);
          reject(new ApiError(409, "no_idle_nodes", `no idle nodes for ${tasks} new processes within ${Math.round(waitMs / 1000)} s; the cluster is busy`));
        }, waitMs),
      };
      this.waiters.push(w);
      this.schedule();
    });
  }

  /** Hand idle nodes to waiting requests, oldest first. Returns how many were served. */
  serve(now: number): number {
    let served = 0;
    for (const w of [...this.waiters]) {
      if (!this.state.jobs.has(w.jobId)) {
        this.drop(w);
        w.reject(new ApiError(409, "job_finished", `job ${w.jobId} ended while waiting for nodes`));
        continue;
      }
      const nodes = this.pick(w.tasks, now);
      if (!nodes) break;
      this.drop(w);
      w.take(nodes);
      served++;
    }
    return served;
  }

  private pick(tasks: number, now: number): string[] | undefined {
    const idle = this.state.idleNodes(now);
    const out: string[] = [];
    let cpus = 0;
    for (const n of idle) {
      if (cpus >= tasks) break;
      out.push(n.row.name);
      cpus += n.row.cpus;
    }
    return cpus >= tasks ? out : undefined;
  }

  private drop(w: Waiter): void {
    clearTimeout(w.timer);
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
  }
}

/** Tasks per node when filling nodes up to their cpus, in order. */
export function fillLayout(cpus: readonly number[], tasks: number): number[] {
  const out: number[] = [];
  let left = tasks;
  for (const c of cpus) {
    const n = Math.min(c, left);
    out.push(n);
    left -= n;
  }
  return out;
}
