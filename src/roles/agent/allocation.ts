import type { Share } from "../../proto/agent.ts";

/** A job's part of this node: whom it runs as, and its share (null: the whole node, as an old controller's `alloc` said). */
export interface JobOnNode {
  user: string | null;
  share: Share | null;
}

/**
 * The jobs this node belongs to, as the controller last said (`shares`, or an old controller's
 * `alloc`: one job, the whole node). Step credentials are honoured only for them; a launch that
 * arrives just before the news waits a moment for it. `changed` hears of every job that came,
 * changed its share or left (then with undefined).
 */
export class NodeAllocation {
  private current = new Map<number, JobOnNode>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly changed: (jobId: number, now: JobOnNode | undefined) => void = () => {}) {}

  /** The controller's `shares`: every job on the node now. */
  setAll(jobs: readonly { jobId: number; user: string | null; share: Share }[]): void {
    this.replace(new Map(jobs.map((j) => [j.jobId, { user: j.user, share: j.share }])));
  }

  /** An old controller's `alloc`: the whole node is this job's, or nobody's. */
  setOnly(jobId: number | null, user: string | null = null): void {
    this.replace(new Map(jobId === null ? [] : [[jobId, { user, share: null }]]));
  }

  private replace(next: Map<number, JobOnNode>): void {
    const before = this.current;
    this.current = next;
    for (const [id, was] of before) if (!next.has(id)) this.changed(id, undefined);
    for (const [id, now] of next) if (!sameJob(before.get(id), now)) this.changed(id, now);
    for (const w of [...this.waiters]) w();
  }

  /** The user the job belongs to (its processes run as that user when the agent is root). */
  userOf(jobId: number): string | null {
    return this.current.get(jobId)?.user ?? null;
  }

  /** Whether a job of another user than `user` (null: the agent's own) is on the node. */
  sharedWith(user: string | null): boolean {
    for (const j of this.current.values()) if (j.user !== user) return true;
    return false;
  }

  /** The job's part of this node, undefined when it has none. */
  of(jobId: number): JobOnNode | undefined {
    return this.current.get(jobId);
  }

  holds(jobId: number): boolean {
    return this.current.has(jobId);
  }

  /** Whether the node belongs to `jobId`, waiting up to `ms` for the controller to say so; false at once when `cancel` aborts. */
  waitFor(jobId: number, ms: number, cancel?: AbortSignal): Promise<boolean> {
    if (this.holds(jobId)) return Promise.resolve(true);
    if (cancel?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        cancel?.removeEventListener("abort", aborted);
        resolve(ok);
      };
      const check = () => {
        if (this.holds(jobId)) done(true);
      };
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(check);
      cancel?.addEventListener("abort", aborted);
    });
  }
}

function sameJob(a: JobOnNode | undefined, b: JobOnNode): boolean {
  if (!a || a.user !== b.user) return false;
  if (a.share === null || b.share === null) return a.share === b.share;
  return a.share.memMiB === b.share.memMiB && a.share.cores.join() === b.share.cores.join() && a.share.gpus.join() === b.share.gpus.join();
}

/** Credentials used on this node, kept until they expire: each is good for one launch here. */
export class UsedCredentials {
  private readonly used = new Map<string, number>();

  /** False if `sig` was used already; otherwise records it. */
  use(sig: string, expires: number, now = Date.now()): boolean {
    if (this.used.size > 1024) for (const [k, until] of this.used) if (until < now) this.used.delete(k);
    if (this.used.has(sig)) return false;
    this.used.set(sig, expires);
    return true;
  }
}
