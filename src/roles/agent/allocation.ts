/**
 * The job this node belongs to, as the controller last said (alloc messages). Step credentials
 * are honoured only for it; a launch that arrives just before the news waits a moment for it.
 */
export class NodeAllocation {
  private current: number | null = null;
  private currentUser: string | null = null;
  private readonly waiters = new Set<() => void>();

  set(jobId: number | null, user: string | null = null): void {
    this.current = jobId;
    this.currentUser = user;
    for (const w of [...this.waiters]) w();
  }

  /** The user the node's job belongs to (its processes run as that user when the agent is root). */
  userOf(jobId: number): string | null {
    return this.current === jobId ? this.currentUser : null;
  }

  holds(jobId: number): boolean {
    return this.current === jobId;
  }

  /** Whether the node belongs to `jobId`, waiting up to `ms` for the controller to say so. */
  waitFor(jobId: number, ms: number): Promise<boolean> {
    if (this.holds(jobId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      const check = () => {
        if (this.holds(jobId)) done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(check);
    });
  }
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
