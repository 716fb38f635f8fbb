/**
 * Shared-memory links between the transport's peers on one node: for each peer, the ring we write
 * to it through and the ring it writes to us through (shm.ts), the polling loop that moves bytes
 * while something waits, and the bells that wake a side that stopped polling. The transport keeps
 * the sockets, peer liveness and routing; it hands this module the frames it gets about rings
 * (SHM, BELL) and asks it first whether a send goes through a ring. Protocol: src/comm/README.md.
 */
import { cfgIdle } from "./cfg.ts";
import { type Encoded, type FrameHead, FrameParser, FrameType, HEADER_BYTES, type Header, controlFrame, frameChunks, writeHeader } from "./codec.ts";
import { Ring } from "./shm.ts";
import { ffi, fs, inDir } from "./lazy.ts";

/** Bytes waiting to be written, and whom to tell when they are (or cannot be). */
export interface Pending {
  buf: Uint8Array;
  done?: () => void;
  fail?: (e: Error) => void;
}

/** What the rings need from the transport, by peer id. */
export interface RingHost {
  readonly id: string;
  /** A control frame for the peer, on its connection, after every frame already sent there. */
  control(peer: string, frame: Uint8Array): void;
  /** The peer is broken (its ring is unusable). */
  fail(peer: string, reason: string): void;
  /** A DATA frame the peer wrote to its ring. */
  deliver(h: Header, body: Uint8Array, from: string): void;
  /** A buffer to read that frame's body into, if its receiver has one. */
  claim(h: Header, from: string): Uint8Array | undefined;
  /** A small DATA frame straight from the ring (FrameParser's DirectTake): true if its receiver took it. */
  direct(h: Header, chunk: Uint8Array, at: number): boolean;
  /** The peer's state as the transport knows it. */
  state(peer: string): "up" | "exited" | "failed";
  /** The transport's record of a known peer: its `state` stays current (read per frame, no lookup). */
  liveness(peer: string): { readonly state: "up" | "exited" | "failed" };
  /** True while something waits on the network (a receive, a write): keep polling. */
  waiting(): boolean;
  /** Polling stopped while something still waits (for a bell now): the host keeps the process alive. */
  parked(): void;
  /** A ring write waits for space / no longer does (the transport keeps close() and the process waiting). */
  writeHeld(): void;
  writeReleased(): void;
}

export interface RingOptions {
  node: string;
  /** Rings are made for our sends (the reader side always accepts them). */
  enabled: boolean;
  dir: string;
  /** Bytes in each ring (a power of two). */
  size: number;
  /** How long polling goes on after the last progress while something waits, in ns of polling. */
  spinNs: number;
  /** When a rank that polls gives its core away (sched_yield): "auto" when more ranks than cores share the node. */
  yields: "auto" | "always" | "never";
}

/** Shared memory between ranks on one node, unless EBB_COMM_SHM=0 (for this process's sends). */
export function ringOptionsFromEnv(node: string): RingOptions {
  const dir = process.env.EBB_COMM_SHM_DIR ?? "/dev/shm";
  let enabled: boolean | undefined;
  return {
    node,
    // Asked at the first message to a peer on this node: a rank that has none never loads node:fs.
    get enabled() {
      return (enabled ??= process.env.EBB_COMM_SHM !== "0" && fs().existsSync(dir));
    },
    dir,
    size: Number(process.env.EBB_COMM_SHM_RING ?? 2 ** 21),
    spinNs: Number(process.env.EBB_COMM_SPIN_US ?? 100) * 1000,
    yields: process.env.EBB_COMM_YIELD === "0" ? "never" : process.env.EBB_COMM_YIELD === "1" ? "always" : "auto",
  };
}

/**
 * sched_yield(2), through bun:ffi: on a node with more ranks than cores, a polling rank that has
 * waited YIELD_AFTER_NS gives its core to any other runnable process (the peer it waits for may be
 * one) at each turn of the loop; on an idle core it returns at once. With a core per rank it does
 * not yield: the other runnable processes are not its peers, and its core would go to them.
 */
let yielder: (() => void) | undefined;
const schedYield = (): void => (yielder ??= openSchedYield())();
function openSchedYield(): () => void {
  try {
    const libc = ffi().dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", { sched_yield: { args: [], returns: "i32" } });
    return () => void libc.symbols.sched_yield();
  } catch {
    return () => {};
  }
}
const YIELD_AFTER_NS = 5_000;
let coreCount = 0;
/** The cores this process may run on (its CPU affinity). */
const cores = (): number => (coreCount ||= navigator.hardwareConcurrency || 1);
/**
 * A gap longer than this between two polling turns was not spent polling (the process was not
 * running, or the event loop had work): it does not count against the polling budget, so a rank
 * that was descheduled polls on when it runs again (its peer has likely answered meanwhile)
 * instead of going to sleep at once and paying for a bell and a wakeup.
 */
const GAP_NS = 20_000;
/**
 * After such a gap, the core is taken as contended for this long: a polling rank then yields its
 * core at each turn (after YIELD_AFTER_NS of a wait) even with a core per rank, since other work
 * (or its peer) is waiting for that core. Without it, on a machine loaded by other processes, a
 * rank polled its whole budget each message while its peer waited for a core, went to sleep, and
 * every message cost a bell and a wakeup (8 B ping-pong at load ~30: 380-480 us one way, against
 * 21-43 us yielding, MPICH's 12-28 us).
 */
const CONTENDED_NS = 50_000_000;
/**
 * Passes over the rings in one polling microtask before the next is queued. A pass is a load of
 * each ring's counter (~15 ns); queueing a microtask and reading the clock cost ~150 ns. So a reply
 * is seen ~20 ns after it lands instead of ~100, and other microtasks wait < 1 µs (one ring).
 */
const POLLS_PER_TURN = 32;
/** While polling, the event loop gets a turn at least this often (sockets, timers). */
const LOOP_TURN_NS = 50_000;
/** While a ring is in use, how often the peers' pids are checked (a backstop: a dead peer's socket closes too). */
const PID_CHECK_MS = 500;

/** BELL frame tags: data in my ring, space in yours, I mapped yours. */
const Bell = { DATA: 0, SPACE: 1, MAPPED: 2 } as const;
const BELLS = [Bell.DATA, Bell.SPACE, Bell.MAPPED].map((tag) => controlFrame(FrameType.BELL, undefined, tag));
const fromUtf8 = new TextDecoder();
/**
 * What a send returns when its frame went out at once, to a ring or a socket (transport.ts exports
 * it): callers compare with it to skip their own chaining. One object for both, or a ring send
 * costs the caller two promises and two microtask turns.
 */
export const RESOLVED: Promise<void> = Promise.resolve();
/** Frames up to this size that fit in the ring go in straight from the payload (no frame buffer made). */
const DIRECT_FRAME_BYTES = 4096;

/** One peer's rings, both directions. */
class RingPair {
  /** The ring we write to it through, and what waits for space in it. */
  out: Ring | undefined;
  readonly queue: Pending[] = [];
  holding = false;
  /** It mapped our ring and unlinked its name (BELL "mapped"): from then on we may exit freely. */
  mapped = false;
  /** The ring it writes to us through, and the parser of its bytes. */
  in: Ring | undefined;
  parser: FrameParser | undefined;
  /** parser.push, made once: the polling loop reads the ring into it. */
  take: ((ring: Uint8Array, start: number, end: number) => void) | undefined;
  constructor(readonly peer: string) {}
  /** Its process id (card ids start with it, base 36). */
  get pid(): number {
    return Number.parseInt(this.peer, 36);
  }
}

export class RingLinks {
  /** Peers we share a ring with (either direction), and the same as a list for the polling loop. */
  private readonly pairs = new Map<string, RingPair>();
  private list: RingPair[] = [];
  /** The peer of the last send through a ring, and its pair (a send to the same peer skips the map). */
  private lastPeer = "";
  private lastPair: RingPair | undefined;
  /** Peers that get no ring from us (not on our node, or making one failed). */
  private readonly socketOnly = new Set<string>();
  private spinning = false;
  private spinIdleSince = 0;
  private lastTurn = 0;
  private lastLoopTurn = 0;
  /** Until when the core counts as contended (a gap was seen while polling): see CONTENDED_NS. */
  private contendedUntil = 0;
  /** Ranks of this job on this node, this one included (the transport's worlds tell): whether to yield. */
  localRanks = 1;
  private pidTimer: ReturnType<typeof setInterval> | undefined;
  private mappedWaiters: (() => void)[] = [];
  /** A frame header being written (send copies it into the ring at once). */
  private readonly head = new Uint8Array(HEADER_BYTES);
  private closed = false;

  constructor(
    private readonly host: RingHost,
    private readonly opts: RingOptions,
  ) {}

  get active(): boolean {
    return this.pairs.size > 0;
  }

  /**
   * Sends one frame to the peer through our ring to it, making and announcing the ring on the first
   * send if the peer is on our node; undefined if the frame must go on the socket.
   */
  send(peer: string, card: { node: string; unix?: string } | undefined, head: FrameHead, payload: Encoded): Promise<void> | undefined {
    let p = peer === this.lastPeer ? this.lastPair : this.pairs.get(peer);
    if (!p?.out) {
      if (this.socketOnly.has(peer)) return undefined;
      p = this.offer(peer, card);
      if (!p) return undefined;
    }
    this.lastPeer = peer;
    this.lastPair = p;
    const ring = p.out!;
    const len = HEADER_BYTES + payload.length;
    if (len <= DIRECT_FRAME_BYTES && p.queue.length === 0 && ring.free(len) >= len) {
      const at = ring.reserve(HEADER_BYTES);
      if (at >= 0) writeHeader(ring.bytes, head, payload.length, payload.kind, at);
      else {
        writeHeader(this.head, head, payload.length, payload.kind);
        ring.put(this.head);
      }
      for (const part of payload.parts) ring.put(part);
      ring.commit();
      if (ring.publish()) this.ring(peer, Bell.DATA);
      return RESOLVED;
    }
    return this.write(p, ring, frameChunks(head, payload));
  }

  /**
   * Makes the ring we will write to the peer through, if it is on our node, and tells it (SHM
   * frame on the connection every earlier frame took, so it reads the ring only after them).
   */
  private offer(peer: string, card: { node: string; unix?: string } | undefined): RingPair | undefined {
    if (!this.opts.enabled || !card || card.node !== this.opts.node || card.unix === undefined) {
      this.socketOnly.add(peer);
      return undefined;
    }
    let ring: Ring;
    try {
      ring = Ring.create(inDir(this.opts.dir, `ebbc-${this.host.id}-${peer}`), this.opts.size);
    } catch {
      this.socketOnly.add(peer);
      return undefined;
    }
    const p = this.pair(peer);
    p.out = ring;
    this.host.control(peer, controlFrame(FrameType.SHM, { path: ring.path }));
    return p;
  }

  private pair(peer: string): RingPair {
    let p = this.pairs.get(peer);
    if (!p) {
      this.pairs.set(peer, (p = new RingPair(peer)));
      this.list = [...this.pairs.values()];
      this.pidTimer ??= setInterval(() => this.checkPids(), PID_CHECK_MS);
      this.pidTimer.unref();
    }
    return p;
  }

  /** The backstop for a peer that died without its socket telling us: its pid is gone. */
  private checkPids(): void {
    for (const p of this.pairs.values()) {
      try {
        process.kill(p.pid, 0);
      } catch (e) {
        if ((e as { code?: string }).code === "ESRCH") {
          this.pumpIn(p);
          this.host.fail(p.peer, `its process ${p.pid} is gone`);
        }
      }
    }
  }

  private write(p: RingPair, ring: Ring, chunks: Uint8Array[]): Promise<void> {
    if (p.queue.length === 0) {
      let rest: Uint8Array[] | undefined;
      for (let i = 0; i < chunks.length; i++) {
        const b = chunks[i]!;
        const n = ring.write(b);
        if (n < b.length) {
          rest = chunks.slice(i + 1);
          rest.unshift(b.subarray(n));
          break;
        }
      }
      if (ring.publish()) this.ring(p.peer, Bell.DATA);
      if (!rest) return RESOLVED;
      chunks = rest;
    }
    return new Promise<void>((resolve, reject) => {
      for (const buf of chunks) p.queue.push({ buf });
      const last = p.queue[p.queue.length - 1]!;
      last.done = resolve;
      last.fail = reject;
      if (!p.holding) {
        p.holding = true;
        this.host.writeHeld();
      }
      this.kick();
    });
  }

  /** Moves queued bytes into the ring as space allows; true if any moved. */
  private pumpOut(p: RingPair): boolean {
    const ring = p.out;
    const q = p.queue;
    if (!ring || q.length === 0) return false;
    let moved = 0;
    while (q.length > 0) {
      const e = q[0]!;
      const n = ring.write(e.buf);
      moved += n;
      if (n < e.buf.length) {
        e.buf = e.buf.subarray(n);
        break;
      }
      q.shift();
      e.done?.();
    }
    if (moved > 0 && ring.publish()) this.ring(p.peer, Bell.DATA);
    if (q.length === 0) this.unhold(p);
    return moved > 0;
  }

  private unhold(p: RingPair): void {
    if (!p.holding) return;
    p.holding = false;
    this.host.writeReleased();
  }

  /** Reads what the peer wrote to its ring; true if anything came. */
  private pumpIn(p: RingPair): boolean {
    const ring = p.in;
    if (!ring || !p.take || ring.available() === 0) return false;
    try {
      ring.read(p.take);
    } catch (e) {
      this.host.fail(p.peer, `protocol error in its shared-memory ring: ${(e as Error).message}`);
      return false;
    }
    if (ring.freed()) this.ring(p.peer, Bell.SPACE);
    return true;
  }

  /** Reads every ring once (a receive about to wait: what came while nothing polled is taken at once). */
  poll(): void {
    const list = this.list;
    for (let i = 0; i < list.length; i++) this.pumpIn(list[i]!);
  }

  /** Reads what the peer wrote to its ring so far (before its BYE or its death counts). */
  drain(peer: string): void {
    const p = this.pairs.get(peer);
    if (p) this.pumpIn(p);
  }

  private ring(peer: string, which: number): void {
    this.host.control(peer, BELLS[which]!);
  }

  /** A BELL frame from the peer. */
  bell(peer: string, which: number): void {
    const p = this.pairs.get(peer);
    if (!p) return;
    if (which === Bell.MAPPED) {
      p.mapped = true;
      this.settled();
    } else if (which === Bell.DATA) this.pumpIn(p);
    else this.pumpOut(p);
    if (this.host.waiting()) this.kick();
  }

  /** An SHM frame from the peer: map the ring it will write to us through. */
  accept(peer: string, body: Uint8Array): void {
    if (this.host.state(peer) !== "up" || this.closed) return;
    const p = this.pair(peer);
    if (p.in) throw new Error("a second shared-memory ring");
    const { path } = JSON.parse(fromUtf8.decode(body)) as { path: string };
    let ring: Ring;
    try {
      ring = Ring.open(path);
    } catch (e) {
      this.host.fail(peer, `cannot map its shared-memory ring ${path} (${(e as Error).message})`);
      return;
    }
    ring.unlink(); // both sides have it mapped: the name is no longer needed
    this.ring(peer, Bell.MAPPED); // its writer may now exit without losing what is in the ring
    p.in = ring;
    const live = this.host.liveness(peer);
    const parser = (p.parser = new FrameParser(
      (h, b) => {
        if (h.type !== FrameType.DATA) throw new Error(`frame type ${h.type} in a ring`);
        if (live.state !== "failed") this.host.deliver(h, b, peer);
      },
      (h) => (h.type === FrameType.DATA && live.state === "up" ? this.host.claim(h, peer) : undefined),
      // Same checks as above: anything unusual goes the long way, which reports it.
      (h, chunk, at) => h.type === FrameType.DATA && live.state === "up" && this.host.direct(h, chunk, at),
    ));
    p.take = (ring, start, end) => parser.push(ring, start, end);
    this.pumpIn(p);
    if (this.host.waiting()) this.kick();
  }

  /** The peer is gone (or we close): what waits on its ring fails with `why`; a ring it never mapped is unlinked. */
  drop(peer: string, why: Error): void {
    const p = this.pairs.get(peer);
    if (!p) return;
    this.pairs.delete(peer);
    this.list = [...this.pairs.values()];
    if (peer === this.lastPeer) this.lastPair = undefined;
    p.take = undefined; // a polling pass already under way reads no more of it
    for (const e of p.queue.splice(0)) e.fail?.(why);
    this.unhold(p);
    p.out?.unlink();
    this.settled();
    if (this.pairs.size === 0) {
      clearInterval(this.pidTimer);
      this.pidTimer = undefined;
    }
  }

  /**
   * Waits until every live peer we made a ring for has mapped it. Its name is the only way in
   * until then: unlinking it at close would lose what we wrote to it (the SHM frame may still be
   * on its way). Like queued socket writes, this waits for the peer, not for a clock.
   */
  async mapped(): Promise<void> {
    const unmapped = () => [...this.pairs.values()].some((p) => p.out && !p.mapped && this.host.state(p.peer) === "up");
    while (unmapped()) await new Promise<void>((r) => this.mappedWaiters.push(r));
  }

  private settled(): void {
    for (const w of this.mappedWaiters.splice(0)) w();
  }

  /**
   * Clean shutdown (after mapped()): every ring is dropped, polling stops. A process that exits
   * without it leaves the names of rings not mapped yet: their readers map them when our SHM frames
   * arrive, read what we wrote, and unlink them then (left behind only if the reader dies too; the
   * next agent on the node sweeps them).
   */
  close(why: Error): void {
    this.closed = true;
    for (const peer of [...this.pairs.keys()]) this.drop(peer, why);
  }

  // ---- polling ----

  /**
   * Polls the rings (data in, space out) while something waits: from microtasks, so a reply is
   * seen a few hundred nanoseconds after it is written, with the event loop getting a turn every
   * LOOP_TURN_NS. Once nothing waits it just stops: the rings keep their "polling" flags, so peers
   * send no bells, and the next wait polls again before anything else (what came meanwhile waits
   * in the ring, as it would in a socket's buffer). After spinNs without progress while something
   * waits it flags every ring as sleeping, and the peers' bells (socket frames) wake it. The budget
   * is fixed, not adaptive: a budget that shrank after give-ups turned every message of a
   * ping-pong into a bell (its round trip then always exceeded the shrunken budget), 30 µs each.
   * Returns whether the rings are being polled (which keeps the process up: queued microtasks and
   * setImmediate do).
   */
  kick(): boolean {
    if (this.spinning) return true;
    if (this.closed || this.pairs.size === 0) return false;
    this.spinning = true;
    for (const p of this.list) p.in?.readerWake();
    this.spinIdleSince = 0; // timed from the first turn that finds nothing to finish (a clock read is ~40 ns)
    queueMicrotask(this.spin);
    return true;
  }

  private readonly spin = (): void => {
    if (this.closed) {
      this.spinning = false;
      return;
    }
    // The clock is read after the passes, not before them: with the read first, the median round
    // trip of the 8 B ping-pong grew by ~100 ns (7 of 8 rounds, src/comm/README.md), though a
    // receive the turn settled could then end at it instead of at a read of its own.
    let progress = false;
    const list = this.list;
    for (let k = 0; k < POLLS_PER_TURN && !progress; k++) {
      for (let i = 0; i < list.length; i++) {
        const p = list[i]!;
        if (this.pumpIn(p)) progress = true;
        if (p.queue.length > 0 && this.pumpOut(p)) progress = true;
      }
      if (!progress) cfgIdle(); // the CFG detector's work, while there is nothing else to do
    }
    if (!this.host.waiting()) {
      this.spinning = false;
      return;
    }
    const now = Bun.nanoseconds();
    if (this.spinIdleSince === 0) this.spinIdleSince = this.lastLoopTurn = this.lastTurn = now;
    const gap = now - this.lastTurn;
    if (gap > GAP_NS) {
      this.spinIdleSince += gap;
      this.contendedUntil = now + CONTENDED_NS;
    }
    this.lastTurn = now;
    if (progress) this.spinIdleSince = now;
    else if (now - this.spinIdleSince > this.opts.spinNs) return this.sleep();
    else if (now - this.spinIdleSince > YIELD_AFTER_NS && this.yields(now)) schedYield();
    if (now - this.lastLoopTurn > LOOP_TURN_NS) {
      this.lastLoopTurn = now;
      setImmediate(this.spin);
    } else queueMicrotask(this.spin);
  };

  private yields(now: number): boolean {
    const y = this.opts.yields;
    return y === "always" || (y === "auto" && (this.localRanks > cores() || now < this.contendedUntil));
  }

  private sleep(): void {
    this.spinning = false;
    let again = false;
    for (const p of this.list) {
      if (p.in?.readerSleep()) again = true;
      if (p.queue.length > 0 && p.out?.writerSleep()) again = true;
    }
    if (again) this.kick();
    else this.host.parked();
  }
}
