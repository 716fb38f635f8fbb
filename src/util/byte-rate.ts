/**
 * A token bucket of bytes: `rate` a second, at most `burst` saved up. `take` counts bytes already
 * received and says how long their reader should wait before reading more, so that a sender gets
 * `rate` on average and `burst` at once, and the reader's thread spends on it no more than that.
 */
export class ByteRate {
  private tokens: number;
  private last: number;

  constructor(
    readonly rate: number,
    readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  /** Counts `n` bytes received at `now` (ms); the milliseconds to wait before reading more (0: none). */
  take(n: number, now: number): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
    this.tokens -= n;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.rate);
  }

  /** What was taken beyond the bucket is let go: the reader read on (nobody else wanted its time). */
  forgive(): void {
    if (this.tokens < 0) this.tokens = 0;
  }
}
