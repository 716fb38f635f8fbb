/**
 * Bytes each user may hold at once in something shared (request bodies being read): one user's
 * many requests cannot grow a daemon's memory past `perUser`, nor take what others need.
 */
import type { Refusal } from "./refusal.ts";

export class UserBytes {
  private readonly held = new Map<string, number>();

  /** `refusal`: what a user holding `held` bytes who asks for `asked` more is told. */
  constructor(
    readonly perUser: number,
    private readonly refusal: (user: string, held: number, asked: number) => Refusal,
  ) {}

  /** Takes `n` bytes for `user`, or throws the refusal. */
  take(user: string, n: number): void {
    const held = this.held.get(user) ?? 0;
    if (held + n > this.perUser) throw this.refusal(user, held, n);
    this.held.set(user, held + n);
  }

  /** Gives back `n` bytes `user` took. */
  give(user: string, n: number): void {
    const left = (this.held.get(user) ?? n) - n;
    if (left > 0) this.held.set(user, left);
    else this.held.delete(user);
  }
}
