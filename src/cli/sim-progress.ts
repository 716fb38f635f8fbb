/**
 * `ebb sim`'s progress line on stderr, with the replay's own speed: rewritten in place on a
 * terminal (at most 4 times a second), a line every 10 seconds with `--progress` otherwise; nothing
 * in the first second of each replay (its rate would be of a handful of events). The clock and the
 * writer are given to it (tests pass their own).
 */
import { err } from "../util/stdio.ts";

export class Progress {
  private last: number;
  private shown = false;
  private policy = "";
  private since = 0;
  private events = 0;

  constructor(
    private readonly tty: boolean,
    private readonly forced: boolean,
    private readonly clock: () => number = () => performance.now(),
    private readonly write: (text: string) => void = err,
  ) {
    this.last = clock();
  }

  /** The replay of `policy` has finished the fraction `done` of its jobs and handled `events` events. */
  readonly update = (policy: string, done: number, events: number): void => {
    if (!this.tty && !this.forced) return;
    const now = this.clock();
    // A new run (another policy, or the same one for the next seed) counts its own events.
    if (policy !== this.policy || events < this.events) {
      this.policy = policy;
      this.since = now;
    }
    this.events = events;
    if (now - this.since < 1000 || now - this.last < (this.tty ? 250 : 10_000)) return;
    this.last = now;
    const perSec = events / Math.max(1e-3, (now - this.since) / 1000);
    const line = `ebb sim: ${policy} ${(done * 100).toFixed(0)}% of the jobs done, ${events.toLocaleString("en-US")} events, ${Math.round(perSec).toLocaleString("en-US")} events/s`;
    if (this.tty) this.write(`\r${line}\x1b[K`);
    else this.write(`${line}\n`);
    this.shown = true;
  };

  /** Wipes the line on a terminal once the runs are over. */
  clear(): void {
    if (this.tty && this.shown) this.write("\r\x1b[K");
  }
}
