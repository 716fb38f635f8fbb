/**
 * Connections along tree edges. A parent keeps one WebSocket per child agent and multiplexes every
 * step over it; up-messages are routed to whoever subscribed to their step. When a connection drops,
 * each step that used it hears `onLost` (the child and its subtree are gone for that step).
 */
import { Channel } from "../proto/channel.ts";
import { StepUp, type StepAuth, type StepDown } from "../proto/step.ts";
import { FRAME_MAX } from "../proto/frames.ts";
import { clientTls } from "../util/tls.ts";
import { mark } from "../util/trace.ts";

export interface StepSubscriber {
  onUp(msg: StepUp): void;
  onLost(reason: string): void;
}

/** A tree edge as seen from the parent. */
export interface PeerConn {
  send(msg: StepDown): void;
  subscribe(step: string, sub: StepSubscriber): () => void;
}

/** The child's end of an edge: where it sends up-messages. */
export interface Upstream {
  send(msg: StepUp): void;
}

/** What a child offers its parents: deliver down-messages and learn when the parent is gone. */
export interface DownstreamHandle {
  deliver(msg: StepDown): void;
  closed(): void;
}

export interface StepEndpoint {
  /**
   * `inProcess`: the edge comes from this process (another agent of `ebb up`'s, or this agent's
   * own launcher of a command job), whose launches an agent here already accepted or the
   * controller's link brought; otherwise from a socket, anyone's.
   */
  attach(up: Upstream, inProcess?: boolean): DownstreamHandle;
}

class Subscriptions {
  private readonly subs = new Map<string, Set<StepSubscriber>>();

  add(step: string, sub: StepSubscriber): () => void {
    let set = this.subs.get(step);
    if (!set) this.subs.set(step, (set = new Set()));
    set.add(sub);
    return () => {
      set!.delete(sub);
      if (set!.size === 0 && this.subs.get(step) === set) this.subs.delete(step);
    };
  }

  route(msg: StepUp): void {
    for (const s of this.subs.get(msg.step) ?? []) s.onUp(msg);
  }

  lost(reason: string): void {
    const all = [...this.subs.values()].flatMap((s) => [...s]);
    this.subs.clear();
    for (const s of all) s.onLost(reason);
  }
}

class WsPeer implements PeerConn {
  private readonly subs = new Subscriptions();
  private readonly channel: Channel<StepDown | StepAuth, StepUp>;
  private sentFirst = false;

  /** Whether anything was sent on it: a link opened ahead (PeerPool.prepare) is not, until its launch. */
  get used(): boolean {
    return this.sentFirst;
  }

  constructor(addr: string, onGone: () => void, ca: string | undefined) {
    this.channel = new Channel<StepDown | StepAuth, StepUp>({
      url: `${ca === undefined ? "ws" : "wss"}://${addr}/v1/step`,
      token: "-",
      frameMax: FRAME_MAX,
      tls: ca === undefined ? undefined : clientTls(ca, "agent"),
      schema: StepUp,
      onOpen: () => mark("edge.open"),
      onMessage: (m) => this.subs.route(m),
      onClose: (reason) => {
        onGone();
        this.subs.lost(`connection to ${addr} lost (${reason})`);
      },
    });
  }

  send(msg: StepDown): void {
    const text = JSON.stringify(msg);
    // The agent takes no frame over FRAME_MAX before a credential: a longer first message (a
    // launch of ~1,000 nodes, a large environment) is preceded by its credential alone.
    if (!this.sentFirst && (msg.t === "launch" || msg.t === "adopt") && text.length * 3 > FRAME_MAX && Buffer.byteLength(text) > FRAME_MAX) {
      this.channel.send({ t: "auth", cred: msg.cred });
    }
    this.sentFirst = true;
    this.channel.sendText(text);
  }

  subscribe(step: string, sub: StepSubscriber): () => void {
    return this.subs.add(step, sub);
  }

  close(): void {
    this.channel.close();
  }
}

/** How long a link opened ahead (PeerPool.prepare) waits for its first message: well inside the agent's 3 s for a credential. */
export const PREPARED_UNUSED_MS = 2000;

/** In-process deliveries not yet made, in the order they were sent, and the next one's index. */
const turns: (() => void)[] = [];
let nextTurn = 0;

/**
 * Runs `task` in a turn of the event loop of its own, after those queued before it. A launch
 * across the thousand agents of one `ebb up` thread is a thousand deliveries: as microtasks they
 * ran in one turn (seconds on a loaded machine), and no heartbeat went out meanwhile, so the
 * controller took the nodes for dead; between two turns the loop runs its timers and sockets.
 */
export function inTurn(task: () => void): void {
  turns.push(task);
  if (turns.length - nextTurn === 1) setImmediate(runTurn);
}

function runTurn(): void {
  const task = turns[nextTurn++]!;
  if (nextTurn === turns.length) turns.length = nextTurn = 0;
  else {
    // A queue that never drains (steady traffic) drops what it ran now and then, not never.
    if (nextTurn >= 1024 && nextTurn * 2 >= turns.length) turns.splice(0, nextTurn), (nextTurn = 0);
    setImmediate(runTurn);
  }
  task();
}

/**
 * An edge to an endpoint in this same process (an agent's own step service, or another agent of
 * `ebb up`'s). `run` delivers each message, in the order sent: by default in an event-loop turn of
 * its own (`inTurn`).
 */
export class LocalPeer implements PeerConn {
  private readonly subs = new Subscriptions();
  private readonly handle: DownstreamHandle;

  constructor(
    endpoint: StepEndpoint,
    private readonly run: (task: () => void) => void = inTurn,
  ) {
    this.handle = endpoint.attach({ send: (m) => this.run(() => this.subs.route(m)) }, true);
  }

  send(msg: StepDown): void {
    this.run(() => this.handle.deliver(msg));
  }

  subscribe(step: string, sub: StepSubscriber): () => void {
    return this.subs.add(step, sub);
  }
}

export class PeerPool {
  /** `ca`: the cluster's CA (PEM): step ports are then TLS (wss://), their certificates signed by it. */
  constructor(private readonly ca?: string) {}

  private readonly peers = new Map<string, WsPeer>();
  private readonly local = new Map<string, PeerConn>();

  /** Route `addr` to an in-process endpoint instead of a socket. */
  addLocal(addr: string, endpoint: StepEndpoint): void {
    this.local.set(addr, new LocalPeer(endpoint));
  }

  /** `addr`'s endpoint is gone (its agent stopped): it is reached by socket again. */
  removeLocal(addr: string): void {
    this.local.delete(addr);
  }

  /**
   * Opens the edge to `addr` now, ahead of its first message (a grow's coming launch to nodes this
   * process has no edge to: docs/adaptation.md §7.1), so that the connection is made while the
   * order is on its way. An agent closes a connection that brings no credential within its
   * AUTH_WINDOW_MS (3 s); one still unused after `unusedMs` is closed here first, so that no
   * launch is ever sent on a connection the agent is closing. True if it opened one (false: the
   * edge is in-process, or has its connection already). Bun writes a new connection's upgrade
   * request only when the event loop next polls: work that follows in the same turn delays it.
   */
  prepare(addr: string, unusedMs = PREPARED_UNUSED_MS): boolean {
    if (this.local.has(addr) || this.peers.has(addr)) return false;
    const peer = this.get(addr) as WsPeer;
    const timer = setTimeout(() => {
      if (peer.used || this.peers.get(addr) !== peer) return;
      this.peers.delete(addr);
      peer.close();
    }, unusedMs);
    timer.unref?.();
    return true;
  }

  get(addr: string): PeerConn {
    const local = this.local.get(addr);
    if (local) return local;
    let peer = this.peers.get(addr);
    if (!peer) {
      const created: WsPeer = new WsPeer(
        addr,
        () => {
          if (this.peers.get(addr) === created) this.peers.delete(addr);
        },
        this.ca,
      );
      peer = created;
      this.peers.set(addr, peer);
    }
    return peer;
  }

  close(): void {
    for (const p of this.peers.values()) p.close();
    this.peers.clear();
  }
}
