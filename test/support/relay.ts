/**
 * A TCP relay on loopback between a client and a server, which loses what a test tells it to, as a
 * network does: `drop` discards the server's bytes to the client while set (a partition one way);
 * `cut()` closes every relayed connection at both ends at once.
 */
import type { Socket, TCPSocketListener } from "bun";

interface Pair {
  client: Socket<Pair>;
  server?: Socket<Pair>;
  /** The client's bytes sent before the server's side was open. */
  early: Uint8Array[];
}

export class Relay {
  drop = false;
  private readonly pairs = new Set<Pair>();
  private readonly listener: TCPSocketListener<Pair>;

  constructor(targetPort: number) {
    const relay = this;
    this.listener = Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(client) {
          const pair: Pair = { client, early: [] };
          client.data = pair;
          relay.pairs.add(pair);
          void Bun.connect<Pair>({
            hostname: "127.0.0.1",
            port: targetPort,
            data: pair,
            socket: {
              open(server) {
                pair.server = server;
                for (const b of pair.early) server.write(b);
                pair.early = [];
              },
              data(_server, bytes) {
                if (!relay.drop) pair.client.write(bytes);
              },
              close: () => relay.end(pair),
              error: () => relay.end(pair),
            },
          }).catch(() => relay.end(pair));
        },
        data(client, bytes) {
          const pair = client.data;
          if (pair.server) pair.server.write(bytes);
          else pair.early.push(new Uint8Array(bytes));
        },
        close: (client) => relay.end(client.data),
        error: (client) => relay.end(client.data),
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.listener.port}`;
  }

  /** Every relayed connection closed at both ends. */
  cut(): void {
    for (const p of [...this.pairs]) this.end(p);
  }

  stop(): void {
    this.cut();
    this.listener.stop(true);
  }

  private end(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.end();
    pair.server?.end();
  }
}
