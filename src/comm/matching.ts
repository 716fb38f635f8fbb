/**
 * Message matching for one communicator channel: posted receives and the unexpected-message queue.
 *
 * A message matches a receive when the sources agree (or the receive says ANY_SOURCE), the tags
 * agree (or ANY_TAG) and the collective sequence numbers are equal (always 0 for point-to-point).
 * Arrivals go to the oldest matching posted receive; receives take the oldest matching queued
 * message. Since a sender uses one connection per peer, this keeps order per (source, communicator).
 */
import { type Bundle, DTYPES, Kind, type Payload, type TypedArray, isTypedArray } from "./codec.ts";

/** The payload kind of a Uint8Array (its bytes are the message as it is). */
const KIND_BYTES = Kind.TYPED + DTYPES.indexOf(Uint8Array as never);
/** Bodies up to this size are landed in another dtype's buffer through the staging views below. */
const STAGE_BYTES = 4096;
const stage = new ArrayBuffer(STAGE_BYTES);
const stageBytes = new Uint8Array(stage);
/** One view of the staging buffer per dtype (by wire number): bytes in, elements out, no allocation. */
const stageViews = DTYPES.map((C) => new (C as unknown as new (b: ArrayBuffer) => TypedArray)(stage));

export const ANY_SOURCE = -1;
export const ANY_TAG = -1;

export interface Envelope {
  src: number;
  tag: number;
  seq: number;
  data: Payload | Bundle;
}

/**
 * A posted receive: what it takes, and whom to tell (called once, synchronously, by the matcher).
 * `resolve` gets the message's fields, not an envelope: a message matched straight from a ring
 * frame never has one.
 */
export interface Posted {
  src: number;
  tag: number;
  seq: number;
  /** The caller's buffer for the message, used when the message is a typed array of its type and length. */
  into?: TypedArray;
  resolve(data: Payload | Bundle, src: number, tag: number): void;
  reject(e: Error): void;
}

export interface KeepAlive {
  hold(): void;
  release(): void;
}

/** Removes q[i] (shift for the first: no array made, as splice makes one). */
function removeAt<T>(q: T[], i: number): T {
  return i === 0 ? q.shift()! : q.splice(i, 1)[0]!;
}

function matches(src: number, tag: number, seq: number, m: { src: number; tag: number; seq: number }): boolean {
  return (src === ANY_SOURCE || src === m.src) && (tag === ANY_TAG || tag === m.tag) && seq === m.seq;
}

/** Whether a posted receive (src, tag, seq) takes a message from `src` with `tag` and `seq`. */
function takes(p: Posted, src: number, tag: number, seq: number): boolean {
  return (p.src === ANY_SOURCE || p.src === src) && (p.tag === ANY_TAG || p.tag === tag) && p.seq === seq;
}

/**
 * `m`, its data copied into `into` when it fits exactly (same type and length). `m` is the
 * receiver's own (just taken from the queue or just decoded), so it is changed in place.
 */
export function landIn(m: Envelope, into: TypedArray | undefined): Envelope {
  m.data = landed(m.data, into);
  return m;
}

/** `d`, or `into` holding a copy of it when it fits exactly (same type and length). */
function landed(d: Payload | Bundle, into: TypedArray | undefined): Payload | Bundle {
  if (!into || d === into || !isTypedArray(d) || d.constructor !== into.constructor || d.length !== into.length) return d;
  const n = d.length;
  if (n <= 16) for (let i = 0; i < n; i++) (into as Uint8Array)[i] = (d as Uint8Array)[i]!; // a native set() costs more
  else (into as Uint8Array).set(d as Uint8Array);
  return into;
}

export class Matcher {
  private readonly unexpected: Envelope[] = [];
  private readonly posted: Posted[] = [];
  /** Receives whose message is being written straight into their buffer, keyed by that buffer's bytes. */
  private readonly claimed = new Map<Uint8Array, Posted>();

  /** `keepAlive` is held while a receive waits, so a waiting process does not exit. */
  constructor(private readonly keepAlive?: KeepAlive) {}

  /** A message arrives: to the oldest matching posted receive, else queued (an envelope is made only then). */
  deliver(src: number, tag: number, seq: number, data: Payload | Bundle): void {
    const posted = this.posted;
    for (let i = 0; i < posted.length; i++) {
      const p = posted[i]!;
      if (takes(p, src, tag, seq)) {
        removeAt(posted, i);
        this.keepAlive?.release();
        p.resolve(landed(data, p.into), src, tag);
        return;
      }
    }
    this.unexpected.push({ src, tag, seq, data });
  }

  /**
   * A message whose body is `chunk[at, at + len)` (valid only during the call, e.g. a ring's
   * memory), of payload kind `kind`: if the oldest receive it matches waits with a typed array of the
   * message's dtype (its own class, not a subclass, as landIn) and of exactly `len` bytes (up to
   * 4 KiB unless it is a Uint8Array), the bytes are copied into it and it is settled;
   * true then. False (nothing done) otherwise: the caller decodes the message and deliver()s it,
   * which finds the same receive, or queues it.
   */
  deliverBytes(src: number, tag: number, seq: number, kind: number, chunk: Uint8Array, at: number, len: number): boolean {
    const posted = this.posted;
    for (let i = 0; i < posted.length; i++) {
      const p = posted[i]!;
      if (!takes(p, src, tag, seq)) continue;
      const into = p.into;
      if (into === undefined || into.byteLength !== len || into.constructor !== DTYPES[kind - Kind.TYPED]) return false;
      if (kind !== KIND_BYTES && len > STAGE_BYTES) return false;
      removeAt(posted, i);
      this.keepAlive?.release();
      if (kind === KIND_BYTES) {
        const bytes = into as Uint8Array;
        if (len <= 16) for (let k = 0; k < len; k++) bytes[k] = chunk[at + k]!; // a native set() costs more
        else bytes.set(chunk.subarray(at, at + len));
      } else {
        // Another dtype: its bytes through the staging buffer, then element by element (as landIn copies).
        for (let k = 0; k < len; k++) stageBytes[k] = chunk[at + k]!;
        const from = stageViews[kind - Kind.TYPED] as Uint8Array;
        const to = into as Uint8Array;
        for (let k = 0, n = into.length; k < n; k++) to[k] = from[k]!;
      }
      p.resolve(into, src, tag);
      return true;
    }
    return false;
  }

  /** The oldest queued message matching, removed from the queue; undefined if none. */
  take(src: number, tag: number, seq: number): Envelope | undefined {
    const q = this.unexpected;
    for (let i = 0; i < q.length; i++) {
      if (matches(src, tag, seq, q[i]!)) return removeAt(q, i);
    }
    return undefined;
  }

  /**
   * At a frame's header: if the oldest receive it matches has a buffer of exactly the body's size,
   * takes that receive and returns the buffer's bytes for the body to be read into (no copy later).
   * The frame must then come to deliverClaimed(bytes, ...) or the receive be rejected.
   */
  claim(src: number, tag: number, seq: number, bodyLen: number, accepts: (into: TypedArray) => boolean): Uint8Array | undefined {
    const posted = this.posted;
    for (let i = 0; i < posted.length; i++) {
      const p = posted[i]!;
      if (!takes(p, src, tag, seq)) continue;
      if (!p.into || p.into.byteLength !== bodyLen || !accepts(p.into)) return undefined;
      removeAt(posted, i);
      p.src = src; // its sender is known now: a failure of that sender rejects it
      const bytes = new Uint8Array(p.into.buffer as ArrayBuffer, p.into.byteOffset, bodyLen);
      this.claimed.set(bytes, p);
      return bytes;
    }
    return undefined;
  }

  /** Delivers a frame read into a claimed buffer; false if `body` is not one. */
  deliverClaimed(body: Uint8Array, src: number, tag: number, seq: number): boolean {
    if (this.claimed.size === 0) return false;
    const p = this.claimed.get(body);
    if (!p) return false;
    this.claimed.delete(body);
    this.keepAlive?.release();
    p.resolve(p.into, src, tag);
    return true;
  }

  /**
   * Posts a receive: `p` is told of the next matching arrival (or of its failure) once, from
   * inside deliver/rejectWhere. Call `take` first: this does not look at the queue.
   */
  add(p: Posted): void {
    this.keepAlive?.hold();
    this.posted.push(p);
  }

  /** Waits for the next matching arrival. Call `take` first: this does not look at the queue. */
  post(src: number, tag: number, seq: number, into?: TypedArray): Promise<Envelope> {
    return new Promise<Envelope>((resolve, reject) =>
      this.add({ src, tag, seq, into, resolve: (data, s, t) => resolve({ src: s, tag: t, seq, data }), reject }),
    );
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
        this.keepAlive?.release();
        p.reject(error(p.src));
      } else i++;
    }
    for (const [k, p] of this.claimed) {
      if (which(p.src, p.tag)) {
        this.claimed.delete(k);
        this.keepAlive?.release();
        p.reject(error(p.src));
      }
    }
  }

  get pending(): number {
    return this.posted.length + this.claimed.size;
  }

  get queued(): number {
    return this.unexpected.length;
  }
}
