/**
 * The agent ↔ controller link inside one process (`ebb up`'s agents on their thread, the
 * controller on the main one): every agent's connection multiplexed on one MessagePort instead of
 * a loopback WebSocket each (1,024 agents held 2,048 sockets). It carries the same JSON texts as
 * the WebSocket, validated by the same schemas on receipt (`decode`, and `AgentHub.onMessage` on
 * the controller's side); only the envelope differs: open, message and close frames of numbered
 * connections, with a close's code and reason as a WebSocket's. Frames sent in one turn of the
 * event loop go in one postMessage (a fan-out to every agent is one batch, not 1,024 wake-ups).
 */
import { MicrotaskBatch } from "../util/microtask-batch.ts";
import { decode, type ClientLink, type ClientLinkOptions } from "./channel.ts";

/** One connection's frame: opened by the agent's side, a message either way, closed by either side. */
type Frame = [conn: number, op: "open"] | [conn: number, op: "msg", text: string] | [conn: number, op: "close", code: number, reason: string];

/** Whether `f` is a frame (only this module posts on the port; checked all the same, as any wire message). */
function isFrame(f: unknown): f is Frame {
  if (!Array.isArray(f) || typeof f[0] !== "number") return false;
  if (f[1] === "open") return f.length === 2;
  if (f[1] === "msg") return f.length === 3 && typeof f[2] === "string";
  return f[1] === "close" && f.length === 4 && typeof f[2] === "number" && typeof f[3] === "string";
}

/** Receives batches; what is not a frame is dropped. */
function onBatches(port: MessagePort, each: (f: Frame) => void): void {
  port.onmessage = ({ data }: MessageEvent<unknown>) => {
    if (!Array.isArray(data)) return;
    for (const f of data) if (isFrame(f)) each(f);
  };
}

/**
 * The agents' end: `connect` opens a link like `Channel` (queues while closed, reconnects with
 * backoff after the controller closes it, unless `close`d).
 */
export class PortLinks {
  /** Frames sent in one turn, posted together at its end. */
  private readonly out: MicrotaskBatch<Frame>;
  private readonly links = new Map<number, PortLink<unknown>>();
  private nextConn = 1;

  constructor(private readonly port: MessagePort) {
    this.out = new MicrotaskBatch<Frame>((frames) => port.postMessage(frames));
    onBatches(port, (f) => this.links.get(f[0])?.receive(f));
  }

  connect<Out, In>(opts: ClientLinkOptions<In>): ClientLink<Out> {
    return new PortLink<Out>(opts as ClientLinkOptions<unknown>, {
      open: (link) => {
        const conn = this.nextConn++;
        this.links.set(conn, link as PortLink<unknown>);
        this.out.push([conn, "open"]);
        return conn;
      },
      send: (f) => this.out.push(f),
      forget: (conn) => this.links.delete(conn),
    });
  }

  close(): void {
    this.port.close();
  }
}

interface Wire {
  open(link: PortLink<unknown>): number;
  send(f: Frame): void;
  forget(conn: number): void;
}

class PortLink<Out> implements ClientLink<Out> {
  private conn: number | undefined;
  private queue: string[] = [];
  private stopped = false;
  private delay = 100;

  constructor(
    private readonly opts: ClientLinkOptions<unknown>,
    private readonly wire: Wire,
  ) {
    // Opened in a later turn, as a socket: the caller has its handle before onOpen runs.
    queueMicrotask(() => this.open());
  }

  get isOpen(): boolean {
    return this.conn !== undefined;
  }

  send(msg: Out): void {
    const text = JSON.stringify(msg);
    if (this.conn !== undefined) this.wire.send([this.conn, "msg", text]);
    else this.queue.push(text);
  }

  close(): void {
    if (this.stopped) return;
    this.stopped = true;
    const conn = this.conn;
    if (conn === undefined) return;
    this.conn = undefined;
    this.wire.send([conn, "close", 1000, ""]);
    this.wire.forget(conn);
    queueMicrotask(() => this.opts.onClose?.("connection closed", 1000, undefined));
  }

  private open(): void {
    if (this.stopped) return;
    const conn = (this.conn = this.wire.open(this as PortLink<unknown>));
    this.delay = 100;
    this.opts.onOpen?.();
    const pending = this.queue;
    this.queue = [];
    for (const text of pending) this.wire.send([conn, "msg", text]);
  }

  /** A frame from the controller's end for this link's connection. */
  receive(f: Frame): void {
    if (f[1] === "msg") {
      const d = decode(this.opts.schema, f[2]);
      if (d.ok) this.opts.onMessage(d.value);
      else this.opts.onInvalid?.(d.error);
      return;
    }
    if (f[1] !== "close" || this.conn !== f[0]) return;
    this.wire.forget(f[0]);
    this.conn = undefined;
    const retry = !this.stopped && this.opts.reconnect !== undefined;
    const wait = this.delay;
    this.opts.onClose?.(f[3] || "connection closed", f[2], retry ? wait : undefined);
    if (!retry || this.stopped) return;
    this.delay = Math.min(this.delay * 2, this.opts.reconnect!.maxDelayMs);
    setTimeout(() => this.open(), wait);
  }
}

/** A connection as the controller's end sees it: what a WebSocket session offers. */
export interface PortSession {
  readonly remote: string;
  /** Always true: this connection comes from this process. */
  readonly inProcess: true;
  send(msg: unknown): void;
  close(code: number, reason: string): void;
}

export interface PortServerHandlers {
  message(s: PortSession, text: string): void;
  close(s: PortSession): void;
}

/**
 * The controller's end: a session per connection the agents' end opens. A session's close (by
 * either end) is reported after the current turn, as a WebSocket's close event comes.
 */
export class PortServer {
  /** Frames sent in one turn, posted together at its end. */
  private readonly out: MicrotaskBatch<Frame>;
  private readonly sessions = new Map<number, PortSession>();

  constructor(
    private readonly port: MessagePort,
    private readonly on: PortServerHandlers,
  ) {
    this.out = new MicrotaskBatch<Frame>((frames) => port.postMessage(frames));
    onBatches(port, (f) => this.receive(f));
  }

  /** Open connections (for tests). */
  get size(): number {
    return this.sessions.size;
  }

  private receive(f: Frame): void {
    const [conn] = f;
    if (f[1] === "open") {
      if (this.sessions.has(conn)) return;
      const s: PortSession = {
        remote: "in-process",
        inProcess: true,
        send: (msg) => {
          if (this.sessions.get(conn) === s) this.out.push([conn, "msg", JSON.stringify(msg)]);
        },
        close: (code, reason) => {
          if (this.sessions.get(conn) !== s) return;
          this.sessions.delete(conn);
          this.out.push([conn, "close", code, reason]);
          queueMicrotask(() => this.on.close(s));
        },
      };
      this.sessions.set(conn, s);
      return;
    }
    const s = this.sessions.get(conn);
    if (!s) return;
    if (f[1] === "msg") return this.on.message(s, f[2]);
    this.sessions.delete(conn);
    this.on.close(s);
  }

  /** Closes every connection (the agents' ends hear 1001 and retry) and the port. */
  close(): void {
    for (const s of [...this.sessions.values()]) s.close(1001, "the controller is stopping");
    queueMicrotask(() => this.port.close());
  }
}
