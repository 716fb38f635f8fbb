/**
 * Per-user counts of something a daemon holds open for its callers (live streams, launcher
 * connections), capped so that no user can take them all: a slot is taken before the thing is
 * opened and given back once it closes.
 */
import type { Refusal } from "./refusal.ts";

export class UserSlots {
  private readonly open = new Map<string, number>();

  /** `refusal`: what a user who holds `perUser` already is told. */
  constructor(
    readonly perUser: number,
    private readonly refusal: (user: string, open: number) => Refusal,
  ) {}

  /** A slot for `user` and its release (once), or the refusal thrown. */
  take(user: string): () => void {
    const n = this.open.get(user) ?? 0;
    if (n >= this.perUser) throw this.refusal(user, n);
    this.open.set(user, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(user) ?? 1) - 1;
      if (left > 0) this.open.set(user, left);
      else this.open.delete(user);
    };
  }
}
