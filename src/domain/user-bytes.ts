/**
 * Bytes each user may hold at once in something shared (request bodies being read, a launcher's
 * unfinished messages, PMI keys and values): one user's many requests, connections or steps cannot
 * grow a daemon's memory past `perUser`, nor take what others need. The one per-user byte counter:
 * `take` throws the refusal (an API route answers it), `of(user)` is one user's share as a frame
 * `Assembler` or a step's KVS counts it (`take` answers false; the caller says why).
 */
import type { Refusal } from "./refusal.ts";

/** One holder's share of a byte budget: what `Assembler` (proto/frames.ts) and `NodeStepPmi` take from (pmi/ declares it again as `KvsShare`: it imports only util/); `ByteBudget` is one too. */
export interface BytesShare {
  readonly max: number;
  /** Takes `n` bytes, or false (nothing taken) when that would pass `max`. */
  take(n: number): boolean;
  give(n: number): void;
}

export class UserBytes {
  private readonly held = new Map<string, number>();

  /** `refusal`: what `take` tells a user holding `held` bytes who asks for `asked` more (holders that only use `of` need none). */
  constructor(
    readonly perUser: number,
    private readonly refusal?: (user: string, held: number, asked: number) => Refusal,
  ) {}

  /** Bytes `user` holds now. */
  heldBy(user: string): number {
    return this.held.get(user) ?? 0;
  }

  /** Takes `n` bytes for `user`, or false (nothing taken) when that would pass `perUser`. */
  tryTake(user: string, n: number): boolean {
    const held = this.heldBy(user);
    if (held + n > this.perUser) return false;
    this.held.set(user, held + n);
    return true;
  }

  /** Takes `n` bytes for `user`, or throws the refusal. */
  take(user: string, n: number): void {
    if (this.tryTake(user, n)) return;
    const held = this.heldBy(user);
    throw this.refusal?.(user, held, n) ?? new RangeError(`${user} holds ${held} bytes; ${n} more would pass ${this.perUser}`);
  }

  /** Gives back `n` bytes `user` took. */
  give(user: string, n: number): void {
    const left = this.heldBy(user) - n;
    if (left > 0) this.held.set(user, left);
    else this.held.delete(user);
  }

  /** `user`'s share, for a holder that answers a refusal itself. */
  of(user: string): BytesShare {
    return { max: this.perUser, take: (n) => this.tryTake(user, n), give: (n) => this.give(user, n) };
  }
}
