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
 * left waits for `flush()` (call it from the socket's drain handler and once it is connected).
 * `end()` closes the socket once everything is out.
 */
export class SocketWriter {
  private sock: Bun.Socket<undefined> | undefined;
  private backlog: Uint8Array | undefined;
  private ending = false;
  private readonly encoder = new TextEncoder();

  attach(sock: Bun.Socket<undefined>): void {
    this.sock = sock;
    this.flush();
  }

  write(text: string): void {
    const bytes = this.encoder.encode(text);
    if (this.backlog) {
      const joined = new Uint8Array(this.backlog.length + bytes.length);
      joined.set(this.backlog);
      joined.set(bytes, this.backlog.length);
      this.backlog = joined;
    } else this.backlog = bytes;
    this.flush();
  }

  end(): void {
    this.ending = true;
    this.flush();
  }

  flush(): void {
    if (!this.sock) return;
    if (this.backlog) {
      const n = this.sock.write(this.backlog);
      this.backlog = n >= this.backlog.length ? undefined : this.backlog.subarray(Math.max(0, n));
    }
    if (!this.backlog && this.ending) this.sock.end();
  }
}
