/**
 * Process-to-process byte transport: listeners, connections, framing, peer liveness.
 *
 * One Transport per process. It knows peers by their card id (a process identity), never by rank,
 * so connections survive a change of membership. Connections are opened lazily, on the first send
 * to a peer or the first receive that names it (so a peer we wait on is always one whose death we
 * can see). A process sends to a peer on exactly one connection (the first it had, outgoing or
 * incoming), which keeps per-peer order; if both sides connect at once there are two sockets and
 * each side reads both.
 *
 * Liveness: a connection that closes without the peer's BYE marks the peer failed; the failure is
 * gossiped (DEAD frames) to every connected peer and sent to each new connection, so a rank waiting
 * on a live rank that waits on a dead one learns of it too. A clean exit (finalize, or process
 * exit with code 0) sends BYE on every connection after the last data frame.
 *
 * Who may talk: the TCP listener is open to every process that reaches the node, so in a job
 * (EBB_TOKEN set) a HELLO carries a digest of the job's token, which only the job's processes
 * have; a connection whose HELLO lacks it, or that sends anything before its HELLO, is closed.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Socket, SocketHandler, SocketListener } from "bun";
import { firstExternalIPv4, formatHostPort, parseHostPort } from "../util/addr.ts";
import { parseJson } from "../util/json.ts";
import { type Encoded, type FrameHead, FrameParser, FrameType, type Header, concat, controlFrame, frameChunks } from "./codec.ts";
import { DIRECT_BYTES, DIRECT_LOWAT, DIRECT_WAIT_MS, type DirectReads, directReads, fdOf } from "./direct.ts";
import { CommError, PeerDown, TransportClosedError } from "./errors.ts";
import { fs, inDir } from "./lazy.ts";
import type { KeepAlive } from "./matching.ts";
import { type Pending, RESOLVED, RingLinks, ringOptionsFromEnv } from "./rings.ts";

/** A rank's business card, published through the PMI KVS. Keep it short (PMI-1 values ~600 B). */
export interface Card {
  /** Process identity, unique for the job's lifetime; connections are keyed by it. */
  id: string;
  node: string;
  /** Unix socket path, used by peers on the same node. */
  unix?: string;
  /** "host:port", used by peers on other nodes. */
  tcp?: string;
}

export interface TransportOptions {
  /** This process's node name; peers with the same node connect over the Unix socket. */
  node: string;
  /** Directory for the Unix socket (its path must stay under 108 bytes). Default EBB_COMM_DIR, XDG_RUNTIME_DIR or the temp dir. */
  runDir?: string;
  /** Address advertised for TCP peers. Default EBB_COMM_HOST, else EBB_NODE_HOST (the agent's address), else the first non-internal IPv4, else 127.0.0.1. */
  host?: string;
  /** Interface the TCP listener binds. Default "0.0.0.0". */
  bindHost?: string;
}

/** What a communicator registers for its context id. */
export interface Receiver {
  deliver(h: Header, body: Uint8Array, from: string): void;
  /** A buffer of h.bodyLen bytes to read the frame's body into (then passed to deliver), if it has one. */
  claim?(h: Header): Uint8Array | undefined;
  /** A small frame whose body is chunk[at, at + h.bodyLen), valid during the call only: true if it took it (no deliver then). */
  direct?(h: Header, chunk: Uint8Array, at: number): boolean;
  peerDown(peer: string, reason: string, exited: boolean): void;
  transportClosed(): void;
}

type PeerState = "up" | "exited" | "failed";

class Peer {
  card: Card | undefined;
  state: PeerState = "up";
  reason = "";
  out: Conn | undefined;
  readonly conns = new Set<Conn>();
  /** Connections ever made with it, either direction. */
  opened = 0;
  /** BYEs received, and how many its BYEs said it was closing (it has exited once all came). */
  byes = 0;
  byesExpected = 0;
  /** Its Unix socket file is gone: it closed cleanly (a crash leaves the file), BYEs or not. */
  gone = false;
  constructor(readonly id: string) {}
  down(): PeerDown {
    return new PeerDown(this.id, this.reason, this.state === "exited");
  }
}

class Conn {
  peer: Peer | undefined;
  socket: Socket<Conn> | undefined;
  readonly queue: Pending[] = [];
  holding = false;
  byeIn = false;
  /** The peer has sent something on it: it is a connection the peer's process accepted and uses. */
  heard = false;
  closed = false;
  readonly parser: FrameParser;
  constructor(
    readonly tcp: boolean,
    onFrame: (c: Conn, h: Header, body: Uint8Array) => void,
    claim: (c: Conn, h: Header) => Uint8Array | undefined,
  ) {
    this.parser = new FrameParser(
      (h, body) => onFrame(this, h, body),
      (h) => claim(this, h),
    );
  }
}

interface Stats {
  /** Outgoing connections opened (attempted) over the transport's life. */
  connects: number;
  /** Incoming connections accepted. */
  accepts: number;
  /** Connections currently open. */
  open: number;
  /** Body bytes read straight from TCP sockets into their buffers (direct.ts). */
  direct: number;
}

/** What send() returns when the frame went out at once: callers can skip their own chaining. */
export { RESOLVED };
const WATCH_DELAY_MS = 25;
/** How long close() waits for accepted connections to say who they are, so its BYEs count them. */
const IDENTIFY_WAIT_MS = 500;
/** A peer that said BYE but not on every connection it announced is taken as exited after this. */
const BYE_GRACE_MS = 2000;
/** How long a dial that found a peer's socket gone lets the listener accept connections already made. */
const ACCEPT_SETTLE_MS = 20;
/** The longest frame an accepted connection may send before its HELLO (a card is a few hundred bytes). */
const MAX_BODY_BEFORE_HELLO = 64 << 10;
/**
 * Accepted connections that have not said HELLO yet, at most (the oldest is closed past it), and how
 * long one may take to say it. The TCP listener is on 0.0.0.0: any user's process may connect, and
 * each connection held is one of this rank's descriptors (a flood took them all: the rank then could
 * not dial its own peers). A peer's HELLO follows its connect at once.
 */
const MAX_UNIDENTIFIED = 64;
const HELLO_WITHIN_MS = 10_000;
const RETRYABLE = new Set(["EAGAIN", "EWOULDBLOCK", "EINTR", "ENOBUFS"]);
const fromUtf8 = new TextDecoder();

/** os.tmpdir() on POSIX (up to a trailing slash), without loading node:os. */
function tmpDir(): string {
  return process.env.TMPDIR || process.env.TMP || process.env.TEMP || "/tmp";
}

/**
 * Listens on `path`, a name no other process uses (it has a random part): the directory is made,
 * and a file left there by a crashed namesake removed, only if listening fails.
 */
function listenUnix(path: string, dir: string, socket: SocketHandler<Conn | undefined>): SocketListener<Conn | undefined> {
  try {
    return Bun.listen<Conn | undefined>({ unix: path, socket, data: undefined });
  } catch {
    fs().mkdirSync(dir, { recursive: true });
    try {
      fs().unlinkSync(path);
    } catch {}
    return Bun.listen<Conn | undefined>({ unix: path, socket, data: undefined });
  }
}

/** What a HELLO must carry: a digest of the job's token (never the token itself), or nothing outside a job. */
function jobAuth(): string | undefined {
  const token = process.env.EBB_TOKEN;
  return token ? createHash("sha256").update(`ebb/comm hello\0${token}`).digest("hex") : undefined;
}

const sameAuth = (a: unknown, b: string): boolean => typeof a === "string" && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function newId(): string {
  const rnd = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36);
  return `${process.pid.toString(36)}.${rnd}`;
}

export class Transport implements KeepAlive {
  readonly id: string;
  readonly card: Card;
  readonly cardText: string;
  readonly node: string;
  private readonly auth = jobAuth();
  /** Next free context id for split/dup agreement (see comm.ts); process-wide on purpose. */
  nextCtx = 0;

  private readonly peers = new Map<string, Peer>();
  /** The card of the last send and its peer (a peer's record lives as long as the transport). */
  private lastCard: Card | undefined;
  private lastPeer: Peer | undefined;
  private readonly conns = new Set<Conn>();
  /** Accepted connections before their HELLO, oldest first, with when each must have said it. */
  private readonly unidentified = new Map<Conn, number>();
  private unidentifiedTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly receivers = new Map<number, Receiver>();
  /** receiverOf's last answer (lastCtx -1: none). */
  private lastCtx = -1;
  private lastReceiver: Receiver | undefined;
  private readonly orphans = new Map<number, { h: Header; body: Uint8Array; from: string }[]>();
  private readonly retired = new Set<number>();
  private readonly reserved = new Set<number>();
  private readonly listeners: SocketListener<Conn | undefined>[] = [];
  private readonly unixPath: string;
  private readonly loop: FrameParser;
  private readonly keeper: ReturnType<typeof setInterval>;
  private readonly onExit = (code: number) => this.exitSync(code);
  private holds = 0;
  /** Whether `keeper` is ref'd: see keepAlive. */
  private kept = false;
  private readonly watched = new Set<Peer>();
  private watchTimer: ReturnType<typeof setTimeout> | undefined;
  private writing = 0;
  private drainWaiters: (() => void)[] = [];
  private closing = false;
  private closedDone: Promise<void> | undefined;
  /** Woken whenever an accepted connection is identified by its HELLO. */
  private identifyWaiters: (() => void)[] = [];
  private readonly counters = { connects: 0, accepts: 0, direct: 0 };
  private readonly rings: RingLinks;
  private constructor(opts: TransportOptions, listen = true) {
    this.id = newId();
    this.node = opts.node;
    const dir = opts.runDir ?? process.env.EBB_COMM_DIR ?? process.env.XDG_RUNTIME_DIR ?? tmpDir();
    this.unixPath = inDir(dir, `ebbc-${this.id}.sock`);
    if (Buffer.byteLength(this.unixPath) > 107) {
      throw new CommError("COMM_SETUP", `ebb/comm: Unix socket path too long (${this.unixPath}); set EBB_COMM_DIR to a short directory`);
    }
    let port = 0;
    if (listen) {
      const unix = listenUnix(this.unixPath, dir, this.acceptHandlers(false));
      const tcp = Bun.listen<Conn | undefined>({
        hostname: opts.bindHost ?? "0.0.0.0",
        port: 0,
        socket: this.acceptHandlers(true),
        data: undefined,
      });
      unix.unref();
      tcp.unref();
      this.listeners.push(unix, tcp);
      port = tcp.port;
    }
    const host = opts.host ?? process.env.EBB_COMM_HOST ?? process.env.EBB_NODE_HOST ?? firstExternalIPv4();
    this.card = { id: this.id, node: opts.node, unix: this.unixPath, tcp: formatHostPort({ host, port }) };
    this.cardText = JSON.stringify(this.card);
    this.loop = new FrameParser((h, body) => this.route(h, body, this.id));
    this.rings = new RingLinks(
      {
        id: this.id,
        control: (peer, frame) => {
          const q = this.peers.get(peer);
          const c = q?.out ?? q?.conns.values().next().value;
          if (c) this.enqueue(c, [frame]);
        },
        fail: (peer, reason) => this.fail(this.peerOf(peer), reason),
        deliver: (h, body, from) => this.route(h, body, from),
        claim: (h) => this.receivers.get(h.ctx)?.claim?.(h),
        direct: (h, chunk, at) => this.receiverOf(h.ctx)?.direct?.(h, chunk, at) ?? false,
        state: (peer) => this.peers.get(peer)?.state ?? "failed",
        liveness: (peer) => this.peerOf(peer),
        waiting: () => this.holds > 0,
        parked: () => {
          if (this.holds > 0) this.keepAlive(true);
        },
        writeHeld: () => {
          this.writing++;
          this.hold();
        },
        writeReleased: () => {
          this.release();
          if (--this.writing === 0) for (const w of this.drainWaiters.splice(0)) w();
        },
      },
      ringOptionsFromEnv(this.node),
    );
    this.keeper = setInterval(() => {}, 1 << 30);
    this.keeper.unref();
    process.on("exit", this.onExit);
  }

  /** Opens the listeners. The card is ready to publish as soon as this returns. */
  static open(opts: TransportOptions): Transport {
    return new Transport(opts);
  }

  /**
   * All that open() does but listen: no socket, no port, no file; nobody can reach it, and its card
   * (port 0) leads nowhere. For a warm rank's warm-up only (roles/warm-prewarm.ts), which runs a
   * rank's start-up code before any rank is known so that the rank finds it compiled.
   */
  static unlistened(opts: TransportOptions): Transport {
    return new Transport(opts, false);
  }

  // ---- keep the process alive while something waits on the network ----

  hold(): void {
    this.holds++;
    if (!this.rings.kick()) this.keepAlive(true);
  }

  release(): void {
    if (--this.holds === 0) this.keepAlive(false);
  }

  /** Reads what the peers on this node wrote to their rings so far (a receive that is about to wait looks first). */
  pollRings(): void {
    this.rings.poll();
  }

  /**
   * The keeper timer is ref'd only while something waits and the rings are not being polled (the
   * polling microtasks and setImmediate keep the process up meanwhile): a ref and an unref per
   * receive were two native calls on the message path.
   */
  private keepAlive(on: boolean): void {
    if (this.kept === on) return;
    this.kept = on;
    if (on) this.keeper.ref();
    else this.keeper.unref();
  }

  /** Ranks of the job on this node, this one included: a polling rank yields its core when they outnumber the cores. */
  set localRanks(n: number) {
    this.rings.localRanks = n;
  }

  // ---- routing to communicators ----

  /** Claims a context id for a communicator being agreed on; false if it is taken here. */
  reserve(ctx: number): boolean {
    if (this.receivers.has(ctx) || this.reserved.has(ctx)) return false;
    this.reserved.add(ctx);
    return true;
  }

  unreserve(ctx: number): void {
    this.reserved.delete(ctx);
  }

  register(ctx: number, r: Receiver): void {
    if (this.receivers.has(ctx)) throw new Error(`context ${ctx} is already in use in this process`);
    this.reserved.delete(ctx);
    this.receivers.set(ctx, r);
    this.retired.delete(ctx);
    const early = this.orphans.get(ctx);
    if (early) {
      this.orphans.delete(ctx);
      for (const f of early) r.deliver(f.h, f.body, f.from);
    }
  }

  /** Stops routing `ctx`; late frames for it are dropped. */
  retire(ctx: number): void {
    this.receivers.delete(ctx);
    if (ctx === this.lastCtx) this.lastCtx = -1;
    this.orphans.delete(ctx);
    this.retired.add(ctx);
  }

  /** The receiver of `ctx`; the last one found is kept, as a peer's frames mostly go to one communicator. */
  private receiverOf(ctx: number): Receiver | undefined {
    if (ctx === this.lastCtx) return this.lastReceiver;
    const r = this.receivers.get(ctx);
    if (r) {
      this.lastCtx = ctx;
      this.lastReceiver = r;
    }
    return r;
  }

  private route(h: Header, body: Uint8Array, from: string): void {
    const r = this.receiverOf(h.ctx);
    if (r) return r.deliver(h, body, from);
    if (this.retired.has(h.ctx)) return;
    // A peer got ahead of us (split/dup or a new world not built here yet): keep it for later
    // (a copy of its header: the parser's may be a scratch one).
    let q = this.orphans.get(h.ctx);
    if (!q) this.orphans.set(h.ctx, (q = []));
    q.push({ h: { ...h }, body, from });
  }

  // ---- peers ----

  private peerOf(id: string, card?: Card): Peer {
    let p = this.peers.get(id);
    if (!p) this.peers.set(id, (p = new Peer(id)));
    if (card && !p.card) p.card = card;
    return p;
  }

  /** Why `card`'s process is unreachable, or undefined while it is up. */
  down(id: string): PeerDown | undefined {
    const p = this.peers.get(id);
    return p && p.state !== "up" ? p.down() : undefined;
  }

  /**
   * Makes sure a connection to `card` will exist so its death is noticed. The connect waits
   * WATCH_DELAY_MS: the awaited peer usually connects first to send, and one socket is enough.
   */
  watch(card: Card): void {
    if (card.id === this.id || this.closing) return;
    const p = this.peerOf(card.id, card);
    if (p.state !== "up" || p.conns.size > 0) return;
    this.watched.add(p);
    if (!this.watchTimer) {
      this.watchTimer = setTimeout(() => {
        this.watchTimer = undefined;
        for (const q of this.watched) if (q.state === "up" && q.conns.size === 0 && !this.closing) this.connect(q);
        this.watched.clear();
      }, WATCH_DELAY_MS);
      this.watchTimer.unref();
    }
  }

  /**
   * Declares a peer failed: pending and future traffic with it rejects, and every connected
   * peer is told. Also the hook for failures learned elsewhere (the agent sees a rank die).
   */
  reportFailure(id: string, reason: string): void {
    if (id === this.id) return;
    this.fail(this.peerOf(id), reason);
  }

  private fail(p: Peer, reason: string): void {
    if (p.state !== "up" || this.closing) return;
    p.state = "failed";
    p.reason = reason;
    this.rings.drop(p.id, p.down());
    for (const c of [...p.conns]) this.drop(c, p.down());
    p.conns.clear();
    p.out = undefined;
    for (const r of [...this.receivers.values()]) r.peerDown(p.id, reason, false);
    const notice = controlFrame(FrameType.DEAD, { id: p.id, reason });
    for (const q of this.peers.values()) {
      const c = q.out ?? q.conns.values().next().value;
      if (q.state === "up" && c) this.enqueue(c, [notice]);
    }
  }

  private exited(p: Peer, reason = "it called finalize or exited"): void {
    if (p.state !== "up") return;
    p.state = "exited";
    p.reason = reason;
    this.rings.drop(p.id, p.down());
    for (const c of [...p.conns]) this.drop(c, p.down());
    p.conns.clear();
    p.out = undefined;
    for (const r of [...this.receivers.values()]) r.peerDown(p.id, p.reason, true);
  }

  // ---- sending ----

  /**
   * Sends one frame (`head` and the payload's bytes) to `to`. Resolves once every byte is handed to
   * the kernel or the ring (the caller may then reuse its buffers); rejects with PeerDown if the
   * peer is or goes down first.
   */
  send(to: Card, head: FrameHead, payload: Encoded): Promise<void> {
    if (this.closing) return Promise.reject(new TransportClosedError());
    if (to.id === this.id) {
      const copy = concat(frameChunks(head, payload));
      queueMicrotask(() => this.loop.push(copy));
      return RESOLVED;
    }
    let p = this.lastPeer;
    if (to !== this.lastCard || p === undefined) {
      p = this.peerOf(to.id, to);
      this.lastCard = to;
      this.lastPeer = p;
    }
    if (p.state !== "up") return Promise.reject(p.down());
    const c = p.out ?? this.connect(p);
    const viaRing = this.rings.send(p.id, p.card, head, payload);
    if (viaRing) return viaRing;
    const chunks = frameChunks(head, payload);
    const rest = this.tryWrite(c, chunks);
    if (!rest) return RESOLVED;
    return new Promise<void>((resolve, reject) => this.enqueue(c, rest, resolve, reject));
  }

  /** Writes what the socket takes now; returns the unwritten chunks, or undefined if all went. */
  private tryWrite(c: Conn, chunks: Uint8Array[]): Uint8Array[] | undefined {
    const s = c.socket;
    if (!s || c.queue.length > 0) return chunks;
    for (let i = 0; i < chunks.length; i++) {
      const b = chunks[i]!;
      const n = s.write(b);
      if (n === b.length) continue;
      const rest = chunks.slice(i + 1);
      rest.unshift(n > 0 ? b.subarray(n) : b);
      return rest;
    }
    return undefined;
  }

  private enqueue(c: Conn, chunks: Uint8Array[], done?: () => void, fail?: (e: Error) => void): void {
    if (c.closed) {
      fail?.(c.peer?.state !== "up" && c.peer ? c.peer.down() : new TransportClosedError());
      return;
    }
    const rest = c.queue.length === 0 ? this.tryWrite(c, chunks) : chunks;
    if (!rest) {
      done?.();
      return;
    }
    for (const buf of rest) c.queue.push({ buf });
    const last = c.queue[c.queue.length - 1]!;
    last.done = done;
    last.fail = fail;
    this.busy(c);
  }

  /** A connection with unwritten data keeps the process alive and close() waiting. */
  private busy(c: Conn): void {
    if (c.holding) return;
    c.holding = true;
    this.writing++;
    this.hold();
  }

  private flush(c: Conn): void {
    const s = c.socket;
    if (!s) return;
    const q = c.queue;
    while (q.length > 0) {
      const p = q[0]!;
      const n = s.write(p.buf);
      if (n < 0) return; // closed: the close handler fails what is left
      if (n < p.buf.length) {
        p.buf = p.buf.subarray(n);
        this.busy(c);
        return;
      }
      q.shift();
      p.done?.();
    }
    this.idle(c);
  }

  private idle(c: Conn): void {
    if (!c.holding) return;
    c.holding = false;
    this.release();
    if (--this.writing === 0) for (const w of this.drainWaiters.splice(0)) w();
  }

  // ---- connections ----

  private connect(p: Peer): Conn {
    const card = p.card;
    const sameNode = card !== undefined && card.node === this.node && card.unix !== undefined;
    const c = new Conn(!sameNode, this.frameHandler, this.claimHandler);
    this.attach(c, p);
    if (!p.out) p.out = c;
    this.counters.connects++;
    const target = sameNode ? { unix: card.unix! } : parseHostPort(card?.tcp ?? "");
    if (!card || "error" in target) {
      const why = card ? `bad address in its card: ${card.tcp}` : "no card known for it";
      queueMicrotask(() => this.fail(p, why));
      return c;
    }
    this.dial(c, p, "unix" in target ? { unix: target.unix } : { hostname: target.host, port: target.port }, 0);
    return c;
  }

  private dial(c: Conn, p: Peer, where: { unix: string } | { hostname: string; port: number }, attempt: number): void {
    if (c.closed) return;
    this.hold();
    const socket = this.connectHandlers;
    const connecting =
      "unix" in where
        ? Bun.connect<Conn>({ unix: where.unix, data: c, socket })
        : Bun.connect<Conn>({ hostname: where.hostname, port: where.port, data: c, socket });
    connecting.then(
      () => this.release(),
      (err: Error & { code?: string }) => {
        this.release();
        if (c.closed) return;
        if (p.state !== "up" || this.closing) return this.drop(c, this.closing ? new TransportClosedError() : p.down());
        if (err.code && RETRYABLE.has(err.code) && attempt < 5) {
          this.hold();
          setTimeout(() => {
            this.release();
            this.dial(c, p, where, attempt + 1);
          }, 10 * 2 ** attempt);
          return;
        }
        // Nobody listens there. On this node a clean exit removes the socket file first, so a file
        // still there (ECONNREFUSED) means a crash; across nodes a closed port (or a listener that
        // closed with this connection in its backlog: ECONNRESET) is what a clean exit and a crash
        // both leave, and the peer's own connection to us, if any, tells which.
        const why = `cannot connect (${err.code ?? err.message})`;
        if (err.code === "ENOENT") {
          p.gone = true;
          void this.nobodyThere(p, c, () => this.exited(p, "it has exited (its socket is gone)"));
        } else if ((err.code === "ECONNREFUSED" || err.code === "ECONNRESET") && c.tcp) void this.nobodyThere(p, c, () => this.fail(p, why));
        else this.fail(p, why);
      },
    );
  }

  /**
   * A connection to the peer (`lost`: a dial that found nobody listening, or one that closed
   * without a BYE) says nothing certain: the peer may be closing. Its last data may still wait in
   * a connection it made to us that the listener has not accepted or identified yet: decide once
   * those are. A live connection of its own then ends it, by its BYE or by closing (see onClose);
   * without one, `verdict` does.
   */
  private async nobodyThere(p: Peer, lost: Conn, verdict: () => void): Promise<void> {
    this.hold();
    try {
      await new Promise((resolve) => setTimeout(resolve, ACCEPT_SETTLE_MS));
      await this.identifyAccepted();
    } finally {
      this.release();
    }
    if (p.state === "up" && ![...p.conns].some((c) => c !== lost && c.socket !== undefined && !c.closed)) verdict();
  }

  /** A peer on this node whose socket file is gone has closed cleanly (close() removes it first). */
  private isGone(p: Peer): boolean {
    if (!p.gone && p.card?.node === this.node && p.card.unix !== undefined && !fs().existsSync(p.card.unix)) p.gone = true;
    return p.gone;
  }

  private readonly frameHandler = (c: Conn, h: Header, body: Uint8Array) => this.onFrame(c, h, body);
  private readonly claimHandler = (c: Conn, h: Header): Uint8Array | undefined =>
    h.type === FrameType.DATA && c.peer?.state === "up" ? this.receivers.get(h.ctx)?.claim?.(h) : undefined;

  private attach(c: Conn, p: Peer): void {
    c.peer = p;
    p.opened++;
    p.conns.add(c);
    this.conns.add(c);
  }

  /** Our HELLO (with our card) then what we know of dead peers. */
  private greeting(): Uint8Array[] {
    const out = [controlFrame(FrameType.HELLO, this.auth === undefined ? this.card : { ...this.card, auth: this.auth })];
    for (const q of this.peers.values()) {
      if (q.state === "failed") out.push(controlFrame(FrameType.DEAD, { id: q.id, reason: q.reason }));
    }
    return out;
  }

  private readonly connectHandlers: SocketHandler<Conn> = {
    open: (s) => {
      const c = s.data;
      s.unref();
      if (c.tcp) s.setNoDelay(true);
      c.socket = s;
      if (c.closed || this.closing) {
        s.terminate();
        return;
      }
      const hello = this.greeting();
      c.queue.unshift(...hello.map((buf) => ({ buf })));
      this.flush(c);
    },
    data: (s, d) => this.read(s.data, d),
    drain: (s) => this.flush(s.data),
    close: (s, err) => this.onClose(s.data, err),
    error: (s, err) => this.onClose(s.data, err),
  };

  private acceptHandlers(tcp: boolean): SocketHandler<Conn | undefined> {
    return {
      open: (s) => {
        s.unref();
        if (tcp) s.setNoDelay(true);
        const c = new Conn(tcp, this.frameHandler, this.claimHandler);
        c.parser.maxBody = MAX_BODY_BEFORE_HELLO;
        c.socket = s as Socket<Conn>;
        s.data = c;
        this.conns.add(c);
        this.counters.accepts++;
        if (this.closing) s.terminate();
        else this.awaitHello(c);
      },
      data: (s, d) => s.data && this.read(s.data, d),
      drain: (s) => s.data && this.flush(s.data),
      close: (s, err) => s.data && this.onClose(s.data, err),
      error: (s, err) => s.data && this.onClose(s.data, err),
    };
  }

  private read(c: Conn, chunk: Uint8Array): void {
    c.heard = true;
    try {
      c.parser.push(chunk);
      const direct = c.tcp && c.parser.bodyLeft >= DIRECT_BYTES ? directReads() : undefined;
      if (direct) this.readDirect(c, direct);
    } catch (e) {
      const why = `protocol error: ${(e as Error).message}`;
      if (c.peer) this.fail(c.peer, why);
      else c.socket?.terminate();
    }
  }

  /**
   * The rest of a large body straight from the socket into the body's memory (direct.ts): no copy
   * by Bun, none by the parser. Waits for more up to DIRECT_WAIT_MS at a time, writing meanwhile
   * what waits to go out on any connection (two ranks sending each other large messages both get
   * on); then hands the socket back to Bun, whose next read comes here again. An end of stream or
   * an error is left for Bun's read to report, so a peer that dies mid-body fails as before.
   */
  private readDirect(c: Conn, direct: DirectReads): void {
    const fd = fdOf(c.socket!);
    if (fd < 0) return;
    let deadline = 0;
    let lowat = 1;
    let useLowat = DIRECT_LOWAT > 1;
    try {
      while (!c.closed) {
        const at = c.parser.bodyBuffer;
        if (!at) return;
        const n = direct.recv(fd, at.body, at.fill, c.parser.bodyLeft);
        if (n > 0) {
          deadline = 0;
          this.counters.direct += n;
          c.parser.filled(n);
          continue;
        }
        if (n < 0) return;
        const now = performance.now();
        if (deadline === 0) deadline = now + DIRECT_WAIT_MS;
        else if (now >= deadline) return;
        const mark = useLowat ? Math.min(c.parser.bodyLeft, DIRECT_LOWAT) : 1;
        if (mark !== lowat) direct.lowWater(fd, (lowat = mark));
        const writers = [...this.conns].filter((w) => w.queue.length > 0 && w.socket && !w.closed && fdOf(w.socket) >= 0);
        const ready = direct.wait(fd, writers.map((w) => fdOf(w.socket!)), deadline - now);
        if (ready === undefined) useLowat = false; // the mark was not reached in time: take what comes
        else for (const i of ready) this.flush(writers[i]!);
      }
    } finally {
      if (lowat !== 1) direct.lowWater(fd, 1); // Bun's epoll must see every byte again
    }
  }

  private onFrame(c: Conn, h: Header, body: Uint8Array): void {
    switch (h.type) {
      case FrameType.DATA:
        if (!c.peer) throw new Error("data before hello");
        if (c.peer.state !== "failed") this.route(h, body, c.peer.id);
        return;
      case FrameType.HELLO: {
        const { auth, ...card } = parseJson(fromUtf8.decode(body)) as Card & { auth?: unknown };
        if (c.peer) throw new Error("second hello");
        if (this.auth !== undefined && !sameAuth(auth, this.auth)) throw new Error("hello without this job's credential");
        c.parser.maxBody = Number.POSITIVE_INFINITY;
        this.unidentified.delete(c);
        const p = this.peerOf(card.id, card);
        this.attach(c, p);
        if (p.state !== "up") {
          c.socket?.terminate();
          return;
        }
        if (!p.out) p.out = c;
        for (const w of this.identifyWaiters.splice(0)) w();
        const known = this.greeting().slice(1);
        if (known.length > 0) this.enqueue(c, known);
        return;
      }
      case FrameType.SHM:
        if (!c.peer) throw new Error("shared memory before hello");
        this.rings.accept(c.peer.id, body);
        return;
      case FrameType.BELL:
        if (c.peer) this.rings.bell(c.peer.id, h.tag);
        return;
      case FrameType.BYE: {
        c.byeIn = true;
        const p = c.peer;
        if (!p) return;
        this.rings.drain(p.id); // what it wrote to its ring came before its BYE
        // The peer says BYE on each of its connections and how many there are: it has exited only
        // once all of them said so, since its last data may travel on one not yet attached here.
        p.byes++;
        const conns = body.length > 0 ? (JSON.parse(fromUtf8.decode(body)) as { conns?: number }).conns : undefined;
        p.byesExpected = Math.max(p.byesExpected, conns ?? p.conns.size);
        if (p.byes >= p.byesExpected) this.exited(p);
        return;
      }
      case FrameType.DEAD: {
        if (!c.peer) throw new Error("dead before hello");
        const { id, reason } = JSON.parse(fromUtf8.decode(body)) as { id: string; reason: string };
        if (id === this.id) return;
        const via = c.peer ? ` (reported by ${c.peer.card?.node ?? "?"}/${c.peer.id})` : "";
        this.fail(this.peerOf(id), reason.includes("(reported by") ? reason : reason + via);
        return;
      }
      default:
        throw new Error(`unknown frame type ${h.type}`);
    }
  }

  private drop(c: Conn, why: Error): void {
    if (!c.closed) {
      c.closed = true;
      c.socket?.terminate();
    }
    this.conns.delete(c);
    for (const p of c.queue.splice(0)) p.fail?.(why);
    this.idle(c);
  }

  /** An accepted connection counts as unidentified until its HELLO (MAX_UNIDENTIFIED, HELLO_WITHIN_MS). */
  private awaitHello(c: Conn): void {
    this.unidentified.set(c, Date.now() + HELLO_WITHIN_MS);
    if (this.unidentified.size > MAX_UNIDENTIFIED) {
      const oldest = this.unidentified.keys().next().value!;
      this.unidentified.delete(oldest);
      oldest.socket?.terminate();
    }
    if (!this.unidentifiedTimer) this.sweepUnidentified();
  }

  private sweepUnidentified(): void {
    const now = Date.now();
    for (const [c, by] of this.unidentified) {
      if (by > now) break;
      this.unidentified.delete(c);
      c.socket?.terminate();
    }
    const next = this.unidentified.values().next().value;
    this.unidentifiedTimer = next === undefined ? undefined : setTimeout(() => this.sweepUnidentified(), next - now);
    this.unidentifiedTimer?.unref();
  }

  private onClose(c: Conn, err?: Error): void {
    if (c.closed) return;
    c.closed = true;
    this.conns.delete(c);
    this.unidentified.delete(c);
    const p = c.peer;
    const why = this.closing ? new TransportClosedError() : p ? (p.state === "up" ? undefined : p.down()) : undefined;
    if (p) {
      p.conns.delete(c);
      if (p.out === c) p.out = undefined;
      if (p.state === "up" && !this.closing) {
        this.rings.drain(p.id); // what it wrote to its ring came first, as a socket's kernel buffer would deliver it
        if (c.byeIn || p.byes > 0 || this.isGone(p)) {
          // A peer that is saying goodbye may close a connection it had not accepted yet without
          // a BYE; it has exited once the BYEs it announced came, or its last connection closed
          // after its socket file went (or after a grace period).
          if (p.byes > 0 && p.byes >= p.byesExpected) this.exited(p);
          else if (p.conns.size === 0 && p.gone) this.exited(p, "it has exited (its socket is gone)");
          else if (p.conns.size === 0) setTimeout(() => this.exited(p), BYE_GRACE_MS).unref();
        } else {
          const why = err ? `connection error (${(err as Error & { code?: string }).code ?? err.message})` : "connection closed unexpectedly";
          // Across nodes, a peer that closes its listener with our connection still in its backlog
          // resets it without a BYE, having never sent anything on it: its other connections
          // (perhaps not yet read here) say which. What was queued on this one fails once that is
          // decided, with the peer's fate. A connection the peer used closing so is a failure now.
          if (c.tcp && !c.heard) {
            const queued = c.queue.splice(0);
            void this.nobodyThere(p, c, () => this.fail(p, why)).then(() => {
              const e = p.state === "up" ? new PeerDown(p.id, why, false) : p.down();
              for (const q of queued) q.fail?.(e);
            });
          } else this.fail(p, why);
        }
      }
    }
    const e = why ?? p?.down() ?? new TransportClosedError();
    for (const q of c.queue.splice(0)) q.fail?.(e);
    this.idle(c);
  }

  // ---- shutdown ----

  /**
   * Clean shutdown: lets queued frames go out, says BYE on every connection, closes the
   * listeners and removes the socket file. Pending receives reject with TransportClosedError.
   */
  close(): Promise<void> {
    this.closedDone ??= (async () => {
      if (this.writing > 0) await new Promise<void>((r) => this.drainWaiters.push(r));
      await this.rings.mapped();
      await this.identifyAccepted();
      this.closing = true;
      this.unlinkSocket(); // first: a peer that sees a connection close can tell a clean exit from a crash
      const byes = this.byes();
      for (const c of [...this.conns]) {
        const bye = byes.get(c);
        if (bye) {
          c.socket!.write(bye);
          c.socket!.end();
        } else c.socket?.terminate();
      }
      for (const l of this.listeners) l.stop(false);
      this.rings.close(new TransportClosedError());
      process.off("exit", this.onExit);
      clearInterval(this.keeper);
      clearTimeout(this.watchTimer);
      for (const r of [...this.receivers.values()]) r.transportClosed();
    })();
    return this.closedDone;
  }

  get closed(): boolean {
    return this.closing;
  }

  /**
   * Waits (briefly) until every accepted connection has said whose it is. A BYE tells the peer on
   * how many connections it will get one; a connection the peer opened that is not identified yet
   * would be left out of that count, and the peer could take us for gone while our last data still
   * travels on another connection.
   */
  private async identifyAccepted(): Promise<void> {
    const deadline = Date.now() + IDENTIFY_WAIT_MS;
    const pending = () => [...this.conns].some((c) => !c.peer && !c.closed);
    while (pending() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.identifyWaiters.push(resolve);
        setTimeout(resolve, 20).unref();
      });
    }
  }

  /**
   * The BYE of every connection that can still say one, each with the number of connections its
   * peer will get a BYE on. Counted before any is sent: ending one connection may close it at once.
   */
  private byes(): Map<Conn, Uint8Array> {
    const open = [...this.conns].filter((c) => c.socket && !c.closed && c.queue.length === 0);
    const perPeer = new Map<Peer | undefined, number>();
    for (const c of open) perPeer.set(c.peer, (perPeer.get(c.peer) ?? 0) + 1);
    return new Map(open.map((c) => [c, controlFrame(FrameType.BYE, { conns: c.peer ? perPeer.get(c.peer)! : 1 })]));
  }

  private unlinkSocket(): void {
    try {
      fs().unlinkSync(this.unixPath);
    } catch {}
  }

  /** Process exit without finalize: BYE if the exit is clean (code 0), so peers see an exit, not a crash. */
  private exitSync(code: number): void {
    if (this.closing) return;
    this.closing = true;
    if (code === 0) {
      this.unlinkSocket(); // rings keep their names: see RingLinks.close
      for (const [c, bye] of this.byes()) {
        c.socket!.write(bye);
        c.socket!.flush();
      }
    }
  }

  stats(): Stats {
    return { ...this.counters, open: this.conns.size };
  }

  /** Debug view: peers this process has met, their state, open connections (how many TCP), connections ever made. */
  peerStates(): { id: string; node: string | undefined; state: PeerState; conns: number; tcp: number; opened: number }[] {
    return [...this.peers.values()].map((p) => ({
      id: p.id,
      node: p.card?.node,
      state: p.state,
      opened: p.opened,
      conns: p.conns.size,
      tcp: [...p.conns].filter((c) => c.tcp).length,
    }));
  }
}
