/**
 * Message matching for one communicator channel: posted receives and the unexpected-message queue.
 *
 * A message matches a receive when the sources agree (or the receive says ANY_SOURCE), the tags
 * agree (or ANY_TAG) and the collective sequence numbers are equal (always 0 for point-to-point).
 * Arrivals go to the oldest matching posted receive; receives take the oldest matching queued
 * message. Since a sender uses one connection per peer, this keeps order per (source, communicator).
 */
import type { Bundle, Payload } from "./codec.ts";

export const ANY_SOURCE = -1;
export const ANY_TAG = -1;

export interface Envelope {
  src: number;
  tag: number;
  seq: number;
  data: Payload | Bundle;
}

interface Posted {
  src: number;
  tag: number;
  seq: number;
  resolve(m: Envelope): void;
  reject(e: Error): void;
}

export interface KeepAlive {
  hold(): void;
  release(): void;
}

function matches(p: { src: number; tag: number; seq: number }, m: Envelope): boolean {
  return (p.src === ANY_SOURCE || p.src === m.src) && (p.tag === ANY_TAG || p.tag === m.tag) && p.seq === m.seq;
}

export class Matcher {
  private readonly unexpected: Envelope[] = [];
  private readonly posted: Posted[] = [];

  /** `keepAlive` is held while a receive waits, so a waiting process does not exit. */
  constructor(private readonly keepAlive?: KeepAlive) {}

  deliver(m: Envelope): void {
    const posted = this.posted;
    for (let i = 0; i < posted.length; i++) {
      const p = posted[i]!;
      if (matches(p, m)) {
        posted.splice(i, 1);
        p.resolve(m);
        return;
      }
    }
    this.unexpected.push(m);
  }

  /** The oldest queued message matching, removed from the queue; undefined if none. */
  take(src: number, tag: number, seq: number): Envelope | undefined {
    const q = this.unexpected;
    const want = { src, tag, seq };
    for (let i = 0; i < q.length; i++) {
      if (matches(want, q[i]!)) return q.splice(i, 1)[0];
    }
    return undefined;
  }

  /** Waits for the next matching arrival. Call `take` first: this does not look at the queue. */
  post(src: number, tag: number, seq: number): Promise<Envelope> {
    return new Promise<Envelope>((resolve, reject) => {
      const ka = this.keepAlive;
      ka?.hold();
      this.posted.push({
        src,
        tag,
        seq,
        resolve: (m) => {
          ka?.release();
          resolve(m);
        },
        reject: (e) => {
          ka?.release();
          reject(e);
        },
      });
    });
  }

  /** Take the next matching message, or wait for one. */
  receive(src: number, tag: number, seq: number): Promise<Envelope> {
    const m = this.take(src, tag, seq);
    return m ? Promise.resolve(m) : this.post(src, tag, seq);
  }

  /** Rejects (and removes) the posted receives selected by `which`. */
  rejectWhere(which: (src: number, tag: number) => boolean, error: (src: number) => Error): void {
    const posted = this.posted;
    for (let i = 0; i < posted.length; ) {
      const p = posted[i]!;
      if (which(p.src, p.tag)) {
        posted.splice(i, 1);
        p.reject(error(p.src));
      } else i++;
    }
  }

  get pending(): number {
    return this.posted.length;
  }

  get queued(): number {
    return this.unexpected.length;
  }
}
