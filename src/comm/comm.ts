/**
 * Communicators: a context id, an ordered group of cards, and this process's rank in it.
 *
 * Traffic is told apart by context id (a frame names its context; the transport routes on it) and,
 * within a communicator, by channel: point-to-point and collective traffic are matched separately,
 * and each collective call gets the next sequence number, so overlapping collectives never mix.
 *
 * Context ids: world of generation g has contextOf(g, 0) = g * 2^20; slots 1..15 of a generation
 * are reserved for adaptation helpers (the intercommunicator). split/dup agree on a new id
 * collectively: every process keeps a counter of the next free id, the members take the maximum
 * of theirs, all move past it, and confirm it is free everywhere (see agree()). Unique in every
 * member process without a global registry.
 *
 * Invalidation: every communicator derived from another (split, dup, or an intercomm built with a
 * parent) is its child; invalidate() on the old world invalidates the whole tree, rejects what is
 * pending on it, and makes every later operation reject with InvalidCommError.
 */
import * as coll from "./collectives.ts";
import type { Channel } from "./collectives.ts";
import {
  type Bundle,
  FLAG_COLL,
  type FrameHead,
  FrameType,
  type Header,
  Kind,
  type Payload,
  type TypedArray,
  decodePayload,
  dtypeOf,
  isTypedArray,
  encodeForSend,
  sent,
} from "./codec.ts";
import { CommUsageError, InvalidCommError, PeerDown, PeerFailedError, TransportClosedError } from "./errors.ts";
import { ANY_SOURCE, ANY_TAG, type Envelope, Matcher, type Posted, landIn } from "./matching.ts";
import { type Op, type Reducible, checkOp, checkReducible } from "./reduce.ts";
import { CallOp, cfgOn, cfgStep } from "./cfg.ts";
import { enter, leave, settling, timed } from "./timing.ts";
import { type Card, RESOLVED, type Receiver, type Transport } from "./transport.ts";

export { ANY_SOURCE, ANY_TAG };

/** Largest user tag (tags are 0..MAX_TAG; ANY_TAG = -1 only for receives). */
export const MAX_TAG = 0x7fffffff;
const GENERATION_BITS = 20;
/** Context ids 0..RESERVED_CONTEXTS-1 of each generation are not handed out by split/dup. */
export const RESERVED_CONTEXTS = 16;

/** Context id of slot `slot` (0 = the world) of world generation `generation`. */
export function contextOf(generation: number, slot = 0): number {
  if (!Number.isInteger(generation) || generation < 0 || generation >= 2 ** (32 - GENERATION_BITS)) {
    throw new CommUsageError(`world generation ${generation} out of range 0..${2 ** (32 - GENERATION_BITS) - 1}`);
  }
  if (!Number.isInteger(slot) || slot < 0 || slot >= RESERVED_CONTEXTS) {
    throw new CommUsageError(`reserved context slot ${slot} out of range 0..${RESERVED_CONTEXTS - 1}`);
  }
  return generation * 2 ** GENERATION_BITS + slot;
}

/** Literal types widened (allreduce(2, "sum") is a number, not a 2). */
export type Widen<T> = T extends number ? number : T extends string ? string : T extends boolean ? boolean : T extends number[] ? number[] : T;

export interface Message<T extends Payload = Payload> {
  data: T;
  source: number;
  tag: number;
}

/**
 * A send of a typed array up to this size is timed as an instant once it is out (see send), and so
 * is a receive that finds one already in a ring; a larger message's copy is timed.
 */
const QUICK_BYTES = 4096;

function message<T extends Payload>(m: Envelope): Message<T> {
  return { data: m.data as T, source: m.src, tag: m.tag };
}

/**
 * A receive that waits: the matcher's entry and its promise's settlers in one object (no closure
 * per call), ending the call's comm-time interval when it settles. It is posted before its promise
 * is made: settled meanwhile (by the rings' first read, within recv), it keeps the outcome, and recv
 * returns it as an already-settled promise, with no resolving functions made. Settled, it is
 * spare: the next receive that waits takes it instead of a new one (the matcher has let go of it
 * by then: it removes an entry before it settles it, and settles it once), so a ping-pong makes none.
 */
class WaitingRecv implements Posted {
  readonly seq = 0;
  ok: ((m: Message<never>) => void) | undefined = undefined;
  fail: ((e: unknown) => void) | undefined = undefined;
  /** Settled before its promise was made: the message, or the error in `error`. */
  early: Message<never> | undefined = undefined;
  error: unknown = undefined;
  constructor(
    public src: number,
    public tag: number,
    public into: TypedArray | undefined,
  ) {}
  resolve(data: Payload | Bundle, src: number, tag: number): void {
    const ok = this.ok;
    // Settled by the receive's first look at the rings: an instant at its entry only for a small
    // typed array; reading a large message (or decoding JSON) took time the program waited.
    if (ok === undefined && !(isTypedArray(data) && data.byteLength <= QUICK_BYTES)) settling(0);
    leave();
    if (ok === undefined) {
      this.early = { data: data as never, source: src, tag };
      return;
    }
    this.free();
    ok({ data: data as never, source: src, tag });
  }
  reject(e: Error): void {
    const fail = this.fail;
    leave();
    if (fail === undefined) {
      this.error = e;
      return;
    }
    this.free();
    fail(e);
  }
  /** Its promise: already settled if it was settled in the call; else one its settlers will settle. */
  promise<T extends Payload>(): Promise<Message<T>> {
    const m = this.early;
    if (m !== undefined) {
      this.free();
      return Promise.resolve(m);
    }
    const e = this.error;
    if (e !== undefined) {
      this.free();
      return Promise.reject(e);
    }
    filling = this;
    return new Promise<Message<T>>(fillSettlers);
  }
  private free(): void {
    this.ok = this.fail = this.into = this.early = this.error = undefined; // holds nothing of the settled receive
    spare = this;
  }
}

/** A settled WaitingRecv, for the next receive that waits. */
let spare: WaitingRecv | undefined;
function waitingRecv(src: number, tag: number, into: TypedArray | undefined): WaitingRecv {
  const w = spare;
  if (w === undefined) return new WaitingRecv(src, tag, into);
  spare = undefined;
  w.src = src;
  w.tag = tag;
  w.into = into;
  return w;
}

/** The receive whose promise is being made: one executor for all of them, no closure per call. */
let filling: WaitingRecv | undefined;
function fillSettlers(ok: (m: Message<never>) => void, fail: (e: unknown) => void): void {
  filling!.ok = ok;
  filling!.fail = fail;
  filling = undefined;
}

interface BaseInit {
  ctx: number;
  /** This process's rank in `local`. */
  rank: number;
  name: string;
  parent?: BaseComm;
}

/** Point-to-point, failure bookkeeping and invalidation; shared by intra- and intercommunicators. */
export abstract class BaseComm implements Receiver {
  readonly ctx: number;
  /** This process's rank (in the local group, for an intercommunicator). */
  readonly rank: number;
  readonly name: string;
  /** The cards point-to-point ranks address: the members, or the remote group of an intercomm. */
  protected readonly peers: readonly Card[];
  protected readonly p2p: Matcher;
  protected readonly coll: Matcher;
  /** Peers gone, by rank; a failure (not a clean exit) also lands in `failed`. */
  protected readonly gone = new Map<number, PeerFailedError>();
  protected failed: PeerFailedError | undefined;
  private readonly rankOf = new Map<string, number>();
  private readonly children = new Set<BaseComm>();
  private parent: BaseComm | undefined;
  private invalid: string | undefined;
  private watchingAll = false;
  /** Ranks already given to transport.watch (once is enough: a connection lasts as long as its peer). */
  private watched: Uint8Array;
  /** Called once per member that fails (not one that exits cleanly); the adaptation layer revokes the world on it. */
  onMemberFailed: ((e: PeerFailedError) => void) | undefined;
  /** The header fields of this communicator's frames, filled in per send (rawSend). */
  private readonly head: FrameHead;

  protected constructor(
    readonly transport: Transport,
    local: readonly Card[],
    peers: readonly Card[],
    init: BaseInit,
  ) {
    if (local[init.rank]?.id !== transport.id) throw new CommUsageError(`${init.name}: rank ${init.rank} is not this process`);
    this.ctx = init.ctx;
    this.rank = init.rank;
    this.head = { type: FrameType.DATA, flags: 0, ctx: init.ctx, src: init.rank, tag: 0, seq: 0 };
    this.name = init.name;
    this.peers = peers;
    peers.forEach((c, i) => this.rankOf.set(c.id, i));
    this.watched = new Uint8Array(peers.length);
    if (this.rankOf.size !== peers.length) throw new CommUsageError(`${init.name}: the same process appears twice`);
    this.p2p = new Matcher(transport);
    this.coll = new Matcher(transport);
    if (transport.closed) throw new TransportClosedError();
    for (let i = 0; i < peers.length; i++) {
      const d = transport.down(peers[i]!.id);
      if (d) this.noteDown(i, d.peer, d.reason, d.exited);
    }
    transport.register(this.ctx, this);
    this.parent = init.parent;
    init.parent?.children.add(this);
  }

  get valid(): boolean {
    return this.invalid === undefined && !this.transport.closed;
  }

  protected usable(): void {
    if (this.invalid !== undefined) throw new InvalidCommError(this.name, this.invalid);
    if (this.transport.closed) throw new TransportClosedError();
  }

  protected checkRank(r: number, what: string, size = this.peers.length): void {
    if (!Number.isInteger(r) || r < 0 || r >= size) throw new CommUsageError(`${what} ${r} is not a rank of ${this.name} (0..${size - 1})`);
  }

  // ---- point-to-point ----

  // send and recv are the latency path: no async functions, no promise hops when nothing waits.

  /**
   * Sends `data` to `dest` with `tag` (>= 0). Resolves when the bytes are handed to the socket;
   * a typed array must not be modified before that.
   */
  send(dest: number, data: Payload, tag = 0): Promise<void> {
    // A small typed array goes out within the call (into a ring or the socket) in well under a
    // microsecond: such a send is timed as an instant after its frame is out, with no clock read
    // before it on the message's way (nor at all without the CFG detector). Anything else, and a
    // small send that has to wait, is timed from its entry (or from the moment it waits).
    const quick = isTypedArray(data) && data.byteLength <= QUICK_BYTES;
    const entry = quick ? 0 : enter();
    let p: Promise<void>;
    try {
      this.usable();
      this.checkRank(dest, "destination");
      if (!Number.isInteger(tag) || tag < 0 || tag > MAX_TAG) throw new CommUsageError(`tag ${tag} must be an integer 0..${MAX_TAG}`);
      p = this.rawSend(dest, data, tag, 0, 0);
    } catch (e) {
      p = Promise.reject(e);
    }
    if (quick) {
      // The CFG step once the frame is out: it is not on the way to the peer.
      if (cfgOn()) cfgStep(CallOp.send, this.ctx, dest, tag, Bun.nanoseconds());
      if (p === RESOLVED) return p;
      enter();
      return p.finally(leave);
    }
    cfgStep(CallOp.send, this.ctx, dest, tag, entry);
    if (p === RESOLVED) {
      leave();
      return p;
    }
    return p.finally(leave);
  }

  /**
   * Receives the oldest message matching source (or ANY_SOURCE) and tag (or ANY_TAG). With `into`,
   * a message that is a typed array of its type and length is received into it (and `data` is
   * `into`; for a large message the bytes go from the transport straight into it); any other
   * message arrives as a new value, as without `into`.
   */
  recv<T extends Payload = Payload>(source: number = ANY_SOURCE, tag: number = ANY_TAG, into?: TypedArray): Promise<Message<T>> {
    const entry = enter();
    cfgStep(CallOp.recv, this.ctx, source, tag, entry);
    try {
      this.usable();
      if (source !== ANY_SOURCE) this.checkRank(source, "source");
      if (!Number.isInteger(tag) || tag < ANY_TAG || tag > MAX_TAG) throw new CommUsageError(`tag ${tag} must be ANY_TAG or 0..${MAX_TAG}`);
      if (into !== undefined && !isTypedArray(into)) throw new CommUsageError("recv: `into` must be a typed array");
      const m = this.p2p.take(source, tag, 0);
      if (m) {
        const got = message<T>(landIn(m, into));
        leave();
        return Promise.resolve(got);
      }
      this.canWait(source);
      // Posted, then the rings read: a message already in one (written while nothing here polled)
      // is taken now, not a turn later, and if small counts as an instant at the receive's entry,
      // with no clock read more. Otherwise one promise, settled by the matcher itself: the caller resumes
      // one microtask after the arrival.
      const w = waitingRecv(source, tag, into);
      this.p2p.add(w);
      settling(entry);
      this.transport.pollRings();
      settling(0);
      return w.promise<T>();
    } catch (e) {
      leave();
      return Promise.reject(e);
    }
  }

  /** Nothing queued: throws if the awaited peer can no longer send, else watches it (a receive may wait on it). */
  private canWait(source: number): void {
    if (source === ANY_SOURCE) {
      if (this.failed) throw this.failed;
      if (!this.watchingAll) {
        this.watchingAll = true;
        for (const c of this.peers) this.transport.watch(c);
      }
    } else {
      const d = this.gone.get(source);
      if (d) throw d;
      if (this.watched[source] === 0) {
        this.watched[source] = 1;
        this.transport.watch(this.peers[source]!);
      }
    }
  }

  /** Throws synchronously on bad input; RESOLVED when the frame went out at once. */
  protected rawSend(dest: number, data: Payload | Bundle, tag: number, seq: number, flags: number): Promise<void> {
    const d = this.gone.size === 0 ? undefined : this.gone.get(dest);
    if (d) return Promise.reject(d);
    // The transport reads the head and the encoding during the call only: no objects per message.
    const head = this.head;
    head.flags = flags;
    head.tag = tag;
    head.seq = seq;
    const e = encodeForSend(data);
    const p = this.transport.send(this.peers[dest]!, head, e);
    sent(e);
    return p === RESOLVED ? p : p.catch((e: unknown) => Promise.reject(this.translate(e)));
  }

  protected async collRecv(src: number, step: number, seq: number): Promise<Payload | Bundle> {
    // A failure anywhere dooms the collective, even one learned between two of its steps.
    if (this.failed) throw this.failed;
    let m = this.coll.take(src, step, seq);
    if (!m) {
      this.canWait(src);
      m = await this.coll.post(src, step, seq);
    }
    return m.data;
  }

  private translate(e: unknown): unknown {
    if (!(e instanceof PeerDown)) return e;
    const r = this.rankOf.get(e.peer);
    if (r === undefined) return e;
    return this.gone.get(r) ?? new PeerFailedError(r, this.name, e.peer, e.reason, e.exited);
  }

  // ---- transport callbacks ----

  /** A large point-to-point frame's header: a waiting receive with a buffer of its size takes the body directly. */
  claim(h: Header): Uint8Array | undefined {
    if ((h.flags & FLAG_COLL) !== 0 || h.kind < Kind.TYPED) return undefined;
    return this.p2p.claim(h.src, h.tag, h.seq, h.bodyLen, (into) => dtypeOf(into) === h.kind - Kind.TYPED);
  }

  /** A small point-to-point frame in a ring: copied straight into the waiting receive's buffer if it has one that fits. */
  direct(h: Header, chunk: Uint8Array, at: number): boolean {
    return (h.flags & FLAG_COLL) === 0 && this.p2p.deliverBytes(h.src, h.tag, h.seq, h.kind, chunk, at, h.bodyLen);
  }

  deliver(h: Header, body: Uint8Array): void {
    const coll = (h.flags & FLAG_COLL) !== 0;
    if (!coll && this.p2p.deliverClaimed(body, h.src, h.tag, h.seq)) return;
    (coll ? this.coll : this.p2p).deliver(h.src, h.tag, h.seq, decodePayload(h.kind, body));
  }

  peerDown(peer: string, reason: string, exited: boolean): void {
    const r = this.rankOf.get(peer);
    if (r !== undefined) this.noteDown(r, peer, reason, exited);
  }

  private noteDown(r: number, peer: string, reason: string, exited: boolean): void {
    if (this.gone.has(r)) return;
    const err = new PeerFailedError(r, this.name, peer, reason, exited);
    this.gone.set(r, err);
    if (!exited) this.failed ??= err;
    if (!exited) queueMicrotask(() => this.onMemberFailed?.(err));
    // A clean exit only fails receives that name it; a failure also fails ANY_SOURCE receives and
    // every pending collective (each one may depend on the dead rank, directly or not).
    this.p2p.rejectWhere((src) => src === r || (!exited && src === ANY_SOURCE), () => err);
    this.coll.rejectWhere((src) => !exited || src === r, () => err);
  }

  transportClosed(): void {
    const e = new TransportClosedError();
    this.p2p.rejectWhere(() => true, () => e);
    this.coll.rejectWhere(() => true, () => e);
  }

  // ---- lifetime ----

  /**
   * Makes this communicator and every one derived from it unusable: pending operations reject and
   * later ones reject with InvalidCommError(reason). Called on the old world when an adaptation
   * commits.
   */
  invalidate(reason = "invalidated"): void {
    if (this.invalid !== undefined) return;
    this.invalid = reason;
    this.transport.retire(this.ctx);
    this.parent?.children.delete(this);
    const err = new InvalidCommError(this.name, reason);
    this.p2p.rejectWhere(() => true, () => err);
    this.coll.rejectWhere(() => true, () => err);
    for (const c of [...this.children]) c.invalidate(reason);
  }

  /** Releases this communicator only; communicators derived from it stay valid. */
  free(): void {
    for (const c of this.children) {
      c.parent = this.parent;
      this.parent?.children.add(c);
    }
    this.children.clear();
    this.invalidate("freed");
  }

  /** Debug: unmatched receives and queued (unexpected) messages. */
  queues(): { posted: number; unexpected: number } {
    return { posted: this.p2p.pending + this.coll.pending, unexpected: this.p2p.queued + this.coll.queued };
  }
}

export interface CommInit extends BaseInit {
  members: readonly Card[];
}

/** An intracommunicator: point-to-point among its members, collectives, split and dup. */
export class Comm extends BaseComm {
  readonly size: number;
  readonly members: readonly Card[];
  private seq = 0;

  constructor(transport: Transport, init: CommInit) {
    super(transport, init.members, init.members, init);
    this.members = init.members;
    this.size = init.members.length;
  }

  /**
   * Runs one collective: usable, arguments valid, no member failed, next sequence number, timed as
   * one call. A member that exited cleanly fails it only where it is needed and missing (a send to
   * it, a receive from it with nothing queued): it may have given its part before it exited.
   */
  private collective<T>(op: number, root: number, check: (() => void) | undefined, body: (ch: Channel) => Promise<T>): Promise<T> {
    cfgStep(op, this.ctx, root, -1, Bun.nanoseconds());
    return timed(async () => {
      this.usable();
      check?.();
      if (this.failed) throw this.failed;
      return body(this.channel());
    });
  }

  private channel(): Channel {
    const seq = (this.seq = (this.seq + 1) >>> 0);
    return {
      rank: this.rank,
      size: this.size,
      send: (dest, data, step) => this.rawSend(dest, data, step, seq, FLAG_COLL),
      recv: (src, step) => this.collRecv(src, step, seq),
    };
  }

  private checkRoot(root: number): void {
    this.checkRank(root, "root");
  }

  private checkList(data: readonly Payload[] | undefined, what: string): void {
    if (!Array.isArray(data) || data.length !== this.size) {
      throw new CommUsageError(`${what} takes an array of ${this.size} values (one per rank) on ${this.name}`);
    }
  }

  barrier(): Promise<void> {
    return this.collective(CallOp.barrier, -1, undefined, (ch) => coll.barrier(ch));
  }

  /** `root`'s `data` on every rank (other ranks' `data` is ignored). */
  bcast<T extends Payload>(data: T | undefined, root = 0): Promise<Widen<T>> {
    return this.collective(CallOp.bcast, root,
      () => this.checkRoot(root),
      (ch) => coll.bcast(ch, data, root) as Promise<Widen<T>>,
    );
  }

  /** Element-wise reduction of every rank's `data` at `root`; undefined elsewhere. */
  reduce<T extends Reducible>(data: T, op: Op, root = 0): Promise<Widen<T> | undefined> {
    return this.collective(CallOp.reduce, root, 
      () => (checkOp(op), checkReducible(data), this.checkRoot(root)),
      (ch) => coll.reduce(ch, data, op, root) as Promise<Widen<T> | undefined>,
    );
  }

  /** Element-wise reduction of every rank's `data`, on every rank (bit-identical everywhere). */
  allreduce<T extends Reducible>(data: T, op: Op): Promise<Widen<T>> {
    return this.collective(CallOp.allreduce, -1, 
      () => (checkOp(op), checkReducible(data)),
      (ch) => coll.allreduce(ch, data, op) as Promise<Widen<T>>,
    );
  }

  /** Every rank's `data`, indexed by rank, at `root`; undefined elsewhere. */
  gather<T extends Payload>(data: T, root = 0): Promise<Widen<T>[] | undefined> {
    return this.collective(CallOp.gather, root, 
      () => this.checkRoot(root),
      (ch) => coll.gather(ch, data, root) as Promise<Widen<T>[] | undefined>,
    );
  }

  /** Every rank's `data`, indexed by rank, on every rank. */
  allgather<T extends Payload>(data: T): Promise<Widen<T>[]> {
    return this.collective(CallOp.allgather, -1, undefined, (ch) => coll.allgather(ch, data) as Promise<Widen<T>[]>);
  }

  /** Rank i gets `data[i]` of `root` (other ranks pass undefined). */
  scatter<T extends Payload>(data: readonly T[] | undefined, root = 0): Promise<Widen<T>> {
    return this.collective(CallOp.scatter, root, 
      () => (this.checkRoot(root), this.rank === root && this.checkList(data, "scatter at the root")),
      (ch) => coll.scatter(ch, data, root) as Promise<Widen<T>>,
    );
  }

  /** Rank i sends `data[j]` to rank j and gets back, at index j, what rank j sent it. */
  alltoall<T extends Payload>(data: readonly T[]): Promise<Widen<T>[]> {
    return this.collective(CallOp.alltoall, -1, 
      () => this.checkList(data, "alltoall"),
      (ch) => coll.alltoall(ch, data) as Promise<Widen<T>[]>,
    );
  }

  /**
   * Partitions the members by `color`; within a color, ranks are ordered by (key, old rank).
   * A null or negative color takes part but gets null back (MPI_UNDEFINED).
   */
  split(color: number | null, key: number = this.rank): Promise<Comm | null> {
    const c = color === null || color < 0 ? -1 : color;
    const check = () => {
      if (!Number.isInteger(c) || !Number.isInteger(key)) throw new CommUsageError("split color and key must be integers");
    };
    return this.collective(CallOp.split, -1, check, async (ch) => {
      const all = (await coll.allgather(ch, [c, key, this.transport.nextCtx])) as [number, number, number][];
      const ctx = await this.agree(Math.max(...all.map((a) => a[2])));
      if (c < 0) return null;
      const ranks = all
        .map((a, r) => ({ color: a[0], key: a[1], r }))
        .filter((x) => x.color === c)
        .sort((a, b) => a.key - b.key || a.r - b.r)
        .map((x) => x.r);
      return new Comm(this.transport, {
        ctx,
        rank: ranks.indexOf(this.rank),
        members: ranks.map((r) => this.members[r]!),
        name: `${this.name}/split(${c})`,
        parent: this,
      });
    });
  }

  /** Same members, same ranks, separate traffic. */
  dup(): Promise<Comm> {
    return this.collective(CallOp.dup, -1, undefined, async (ch) => {
      const ctx = await this.agree(await coll.allreduce(ch, this.transport.nextCtx, "max"));
      return new Comm(this.transport, { ctx, rank: this.rank, members: this.members, name: `${this.name}/dup`, parent: this });
    });
  }

  /**
   * Confirms a proposed context id (the members' maximum): each member reserves it if it is free
   * locally, and all must succeed. It can be taken only when this process runs several
   * split/dup calls on different communicators at once; then everyone proposes again, higher.
   */
  private async agree(proposed: number): Promise<number> {
    const t = this.transport;
    for (let ctx = proposed; ; ) {
      if (ctx >= 2 ** 32) throw new CommUsageError("out of context ids");
      t.nextCtx = Math.max(t.nextCtx, ctx + 1);
      const mine = t.reserve(ctx);
      if ((await coll.allreduce(this.channel(), mine ? 1 : 0, "min")) === 1) return ctx;
      if (mine) t.unreserve(ctx);
      ctx = await coll.allreduce(this.channel(), t.nextCtx, "max");
    }
  }
}

export interface IntercommInit extends BaseInit {
  local: readonly Card[];
  remote: readonly Card[];
}

/**
 * Two disjoint groups sharing a context id: point-to-point addresses the *remote* group's ranks,
 * `rank`/`size` describe the local group. Both sides must build it with the same ctx.
 */
export class Intercomm extends BaseComm {
  readonly size: number;
  readonly remoteSize: number;
  readonly local: readonly Card[];
  readonly remote: readonly Card[];

  constructor(transport: Transport, init: IntercommInit) {
    const ids = new Set(init.local.map((c) => c.id));
    if (init.remote.some((c) => ids.has(c.id))) throw new CommUsageError(`${init.name}: the groups overlap`);
    super(transport, init.local, init.remote, init);
    this.local = init.local;
    this.remote = init.remote;
    this.size = init.local.length;
    this.remoteSize = init.remote.length;
  }
}
