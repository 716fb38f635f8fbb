import { ChunkQueue } from "./bytes.ts";

/**
 * A PMI byte stream on Bun's own sockets (a socketpair end adopted by descriptor, or TCP). Both
 * ends use them: node:net costs a rank ~16 ms of CPU just to import and the agent more per rank.
 */

export type StreamTarget = { fd: number } | { hostname: string; port: number };

/** Bun.connect for a descriptor or TCP. */
export function bunConnect(target: StreamTarget, socket: Bun.SocketHandler<undefined>): Promise<Bun.Socket<undefined>> {
  // FdSocketOptions is declared in bun-types, but not among connect()'s overloads.
  return Bun.connect({ ...target, socket } as unknown as Bun.TCPSocketConnectOptions<undefined>);
}

/**
 * Text out to a socket that may not take it all at once, or may not be connected yet: what is
 * left waits, as a queue of chunks, for `flush()` (call it from the socket's drain handler and once
 * it is connected); `backlog` says how much waits, for back-pressure. `end()` closes the socket
 * once everything is out.
 */
export class SocketWriter {
  private sock: Bun.Socket<undefined> | undefined;
  private readonly queue = new ChunkQueue();
  private ending = false;
  private readonly encoder = new TextEncoder();

  /** `onDrain`: called when the backlog has gone out after a flush. */
  constructor(private readonly onDrain?: () => void) {}

  get backlog(): number {
    return this.queue.length;
  }

  attach(sock: Bun.Socket<undefined>): void {
    this.sock = sock;
    this.flush();
  }

  write(text: string): void {
    this.queue.push(this.encoder.encode(text));
    this.flush();
  }

  end(): void {
    this.ending = true;
    this.flush();
  }

  /** Drop what waits: the peer is being cut off. */
  abort(): void {
    this.queue.clear();
    this.ending = true;
    this.sock?.end();
  }

  flush(): void {
    if (!this.sock) return;
    const had = this.queue.length;
    for (let c = this.queue.first(); c !== undefined; c = this.queue.first()) {
      const n = this.sock.write(c);
      if (n <= 0) break;
      this.queue.advance(n);
      if (n < c.length) break;
    }
    if (this.queue.length === 0 && this.ending) this.sock.end();
    if (had > 0 && this.queue.length === 0) this.onDrain?.();
  }
}
