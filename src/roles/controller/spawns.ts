/**
 * Requests for new nodes from running jobs (PMI spawn), each waiting at most its own limit. They
 * only wait here: the scheduling pass sees them (`requests`) and its plan grants nodes to them
 * before the queue (sched/plan.ts: idle nodes in name order until their cpus cover the tasks);
 * the plan's applier hands the granted nodes over (`grant`).
 */
import { conflict } from "../../domain/refusal.ts";
import type { SpawnRequest } from "../../sched/plan.ts";
import type { ClusterState } from "./state.ts";

interface Waiter {
  id: number;
  jobId: number;
  tasks: number;
  /** Takes the nodes, synchronously, before anything else can be scheduled on them. */
  take(nodes: string[]): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class SpawnQueue {
  private readonly waiters: Waiter[] = [];
  private nextId = 1;

  constructor(
    private readonly state: ClusterState,
    private readonly schedule: () => void,
  ) {}

  get waiting(): number {
    return this.waiters.length;
  }

  /** Waits for idle nodes for `tasks` processes; `grant` runs the moment a plan grants them. */
  request<T>(jobId: number, tasks: number, waitMs: number, grant: (nodes: string[]) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const w: Waiter = {
        id: this.nextId++,
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
          reject(conflict("no_idle_nodes", `no idle nodes for ${tasks} new processes within ${Math.round(waitMs / 1000)} s; the cluster is busy`));
        }, waitMs),
      };
      this.waiters.push(w);
      this.schedule();
    });
  }

  /** The requests still waiting, oldest first, for a snapshot; those whose job ended are refused. */
  requests(): SpawnRequest[] {
    const out: SpawnRequest[] = [];
    for (const w of [...this.waiters]) {
      if (!this.state.jobs.has(w.jobId)) {
        this.drop(w);
        w.reject(conflict("job_finished", `job ${w.jobId} ended while waiting for nodes`));
        continue;
      }
      out.push({ id: w.id, jobId: w.jobId, tasks: w.tasks });
    }
    return out;
  }

  /** A plan granted `nodes` to request `id` (already re-checked): the request takes them. */
  grant(id: number, nodes: string[]): boolean {
    const w = this.waiters.find((x) => x.id === id);
    if (!w) return false;
    this.drop(w);
    w.take(nodes);
    return true;
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
