/**
 * JSON messages over a WebSocket, one message per text frame. The client side can reconnect with
 * backoff and queue what is sent while disconnected; every received frame is validated by a schema.
 */
import { describeIssues } from "../util/zod.ts";
import { JsonTooDeep, parseJson } from "../util/json.ts";
import type { MessageSchema } from "./tagged.ts";
import { framesOf } from "./frames.ts";

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * A message validated by `schema`. `maxDepth` for a sender that is not trusted (a user's launcher,
 * a peer not yet authenticated; util/json.ts): deeper nesting is refused before it is parsed.
 * Agents and the controller are trusted and their messages are not scanned.
 */
export function decode<T>(schema: MessageSchema<T>, text: string | Buffer, maxDepth?: number): Decoded<T> {
  let raw: unknown;
  try {
    const s = typeof text === "string" ? text : text.toString("utf8");
    raw = maxDepth === undefined ? JSON.parse(s) : parseJson(s, maxDepth);
  } catch (e) {
    return { ok: false, error: e instanceof JsonTooDeep ? `message is ${e.message}` : "message is not JSON" };
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: describeIssues(parsed.error) };
}

/** Anything messages can be sent on: a WebSocket of either side, or an in-process pair. */
export interface Link<Out> {
  send(msg: Out): void;
  close(reason?: string): void;
}

/** A client's link: a WebSocket `Channel`, or a connection of an in-process pair (port-link.ts). */
export interface ClientLink<Out> extends Link<Out> {
  readonly isOpen: boolean;
}

/** What a client link does with what it receives and with its closes, whatever carries it. */
export interface ClientLinkOptions<In> {
  schema: MessageSchema<In>;
  onMessage(msg: In): void;
  onOpen?(): void;
  /** After every close; `retryInMs` when the channel will try again (reconnect set and not closed). */
  onClose?(reason: string, code: number, retryInMs?: number): void;
  /** Reconnect after a close, with exponential backoff capped at maxDelayMs. */
  reconnect?: { maxDelayMs: number };
  /** Messages that fail validation. */
  onInvalid?(error: string): void;
}

export interface ChannelOptions<In> extends ClientLinkOptions<In> {
  url: string;
  token: string;
  /** For a wss:// URL: Bun's TLS options (the CA to trust, the identity check). */
  tls?: object;
  /** Longer messages go in pieces (frames.ts), for a server that takes no larger frame. */
  frameMax?: number;
}

export class Channel<Out, In> implements ClientLink<Out> {
  private ws: WebSocket | undefined;
  private queue: (string | Uint8Array<ArrayBuffer>)[] = [];
  private open = false;
  private stopped = false;
  private delay = 100;
  /** Why the last connection attempt failed, as the WebSocket said it (e.g. ECONNREFUSED). */
  private lastError: string | undefined;

  constructor(private readonly opts: ChannelOptions<In>) {
    this.connect();
  }

  get isOpen(): boolean {
    return this.open;
  }

  send(msg: Out): void {
    this.sendText(JSON.stringify(msg));
  }

  /** A message already turned to JSON (the caller needed its text). */
  sendText(text: string): void {
    const frames = this.opts.frameMax === undefined ? [text] : framesOf(text, this.opts.frameMax);
    for (const f of frames) {
      if (this.open && this.ws) this.ws.send(f);
      else this.queue.push(f);
    }
  }

  close(): void {
    this.stopped = true;
    this.ws?.close();
  }

  private connect(): void {
    const ws = new WebSocket(this.opts.url, { headers: { Authorization: `Bearer ${this.opts.token}` }, tls: this.opts.tls } as unknown as string[]);
    this.ws = ws;
    ws.onopen = () => {
      this.open = true;
      this.delay = 100;
      this.opts.onOpen?.();
      const pending = this.queue;
      this.queue = [];
      for (const frame of pending) ws.send(frame);
    };
    ws.onmessage = (ev) => {
      const d = decode(this.opts.schema, ev.data as string);
      if (d.ok) this.opts.onMessage(d.value);
      else this.opts.onInvalid?.(d.error);
    };
    ws.onclose = (ev) => {
      const wasOpen = this.open;
      this.open = false;
      if (this.ws !== ws) return;
      const why = ev.reason || (wasOpen ? "connection closed" : (this.lastError ?? "connection refused"));
      this.lastError = undefined;
      const retry = !this.stopped && this.opts.reconnect !== undefined;
      const wait = this.delay;
      this.opts.onClose?.(why, ev.code, retry ? wait : undefined);
      if (this.stopped || !this.opts.reconnect) return;
      this.delay = Math.min(this.delay * 2, this.opts.reconnect.maxDelayMs);
      setTimeout(() => !this.stopped && this.connect(), wait);
    };
    ws.onerror = (ev) => {
      // onclose follows and decides; keep what went wrong for it (Bun: a message and an errno code).
      const e = ev as Event & { message?: string; error?: { code?: string } };
      const text = (e.message ?? "").replace(/^WebSocket connection to '[^']*' failed: /, "");
      const code = e.error?.code;
      this.lastError = [text, code && !text.includes(code) ? code : ""].filter(Boolean).join(": ") || undefined;
    };
  }
}
