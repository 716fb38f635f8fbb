import { type Server, type Socket, createServer } from "node:net";
import type { Duplex } from "node:stream";
import type { PmiBackend } from "./backend.ts";
import { SocketWriter, bunConnect } from "./bun-socket.ts";
import { PmiConnection, type PmiConnectionOptions, type PmiMode } from "./connection.ts";
import { loopbackPeerUid } from "./peer-uid.ts";
import { PMI_READ_COST, PMI_REQUEST_COST } from "./limits.ts";

/**
 * Counts what a read from a rank's connection cost (`readCost`); the milliseconds to read no more of it (0: none).
 * The agent paces each user's ranks together (a rank flooding requests, valid or not, would
 * otherwise take the thread that serves every job's PMI on the node).
 */
export type PmiPace = (cost: number) => number;

const CMD = Buffer.from("cmd=");

/** What a read costs the server: its bytes, PMI_READ_COST, and PMI_REQUEST_COST for each request in it (`cmd=`, PMI-1 and PMI-2). */
export function readCost(chunk: Uint8Array | string): number {
  const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let requests = 0;
  for (let at = bytes.indexOf(CMD); at >= 0; at = bytes.indexOf(CMD, at + CMD.length)) requests++;
  return bytes.length + PMI_READ_COST + requests * PMI_REQUEST_COST;
}

/** Reads no more of a connection for `pace`'s wait for `chunk`. */
function paused(pace: PmiPace | undefined, chunk: Uint8Array | string, pause: () => void, resume: () => void): void {
  if (!pace) return;
  const wait = pace(readCost(chunk));
  if (wait <= 0) return;
  pause();
  setTimeout(resume, wait);
}

/**
 * Wire a connected stream to a PmiConnection: the parent's end of a rank's socketpair
 * (`child.stdio[3]` when spawned with `stdio: [..., "pipe"]`) or a socket accepted on PMI_PORT.
 */
export function attachPmiSocket(socket: Duplex, opts: PmiConnectionOptions, pace?: PmiPace): PmiConnection {
  const conn = new PmiConnection(
    {
      write: (data) => void socket.write(data),
      close: (discard) => void (discard ? socket.destroy() : socket.end()),
      backlog: () => socket.writableLength,
    },
    opts,
  );
  socket.on("data", (chunk: Uint8Array | string) => {
    conn.feed(chunk);
    paused(pace, chunk, () => socket.pause(), () => socket.resume());
  });
  socket.on("drain", () => conn.drained());
  socket.on("close", () => conn.closed());
  socket.on("end", () => conn.closed());
  socket.on("error", () => conn.closed());
  return conn;
}

/**
 * Serve PMI on the parent's end of a rank's socketpair, given as a descriptor (`child.stdio[3]`),
 * through Bun's own socket. Replies written before it is adopted wait for it.
 */
export function attachPmiFd(fd: number, opts: PmiConnectionOptions, pace?: PmiPace): PmiConnection {
  const out = new SocketWriter(() => conn.drained());
  const conn: PmiConnection = new PmiConnection(
    { write: (data) => out.write(data), close: (discard) => (discard ? out.abort() : out.end()), backlog: () => out.backlog },
    opts,
  );
  const closed = () => conn.closed();
  const data = (s: Bun.Socket<undefined>, chunk: Uint8Array) => {
    conn.feed(chunk);
    paused(pace, chunk, () => s.pause(), () => s.resume());
  };
  bunConnect({ fd }, { data, drain: () => out.flush(), end: closed, close: closed, error: closed }).then(
    (s) => out.attach(s),
    closed,
  );
  return conn;
}

export interface PmiPortServer {
  /** For `PMI_PORT=<host>:<port>`. */
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A TCP listener for PMI_PORT mode; ranks identify themselves with PMI_ID (`initack` / `fullinit`). */
export async function listenPmiPort(opts: {
  byId: (pmiid: number) => PmiBackend | undefined;
  mode?: PmiMode;
  host?: string;
  port?: number;
  onError?: (message: string) => void;
  /** Serve only connections opened by this user (the ranks'); others are closed unanswered. */
  uid?: number;
  /**
   * Connections open at once, past which new ones are closed unanswered: each is a descriptor of
   * the agent's (root's, serving every user), and the ranks' user may open as many as he likes.
   */
  maxOpen?: number;
  pace?: PmiPace;
}): Promise<PmiPortServer> {
  const host = opts.host ?? "127.0.0.1";
  const sockets = new Set<Socket>();
  let warnedFull = false;
  let refusedOthers = 0;
  const server: Server = createServer((sock) => {
    // The cap first: past it a connection costs nothing, whoever opened it (a look-up of its owner
    // may read the kernel's whole socket table, where netlink does not answer: peer-uid.ts).
    if (opts.maxOpen !== undefined && sockets.size >= opts.maxOpen) {
      sock.destroy();
      if (!warnedFull) opts.onError?.(`PMI_PORT: refused connections past ${opts.maxOpen} open at once, the most this step's port takes (its ranks here and PMI_PORT_SLACK)`);
      warnedFull = true;
      return;
    }
    if (opts.uid !== undefined) {
      const owner = loopbackPeerUid({ address: sock.remoteAddress ?? "", port: sock.remotePort ?? -1 }, { address: sock.localAddress ?? host, port: sock.localPort ?? -1 });
      if (owner !== opts.uid) {
        sock.destroy();
        // Said once, then every 1,000th: another user's flood must not fill the agent's log.
        if (refusedOthers++ % 1000 === 0) opts.onError?.(`PMI_PORT: refused a connection from port ${sock.remotePort} opened by ${owner === undefined ? "an unknown user" : `uid ${owner}`}, not the ranks' user (uid ${opts.uid})${refusedOthers > 1 ? ` (${refusedOthers} refused so far)` : ""}`);
        return;
      }
    }
    warnedFull = false;
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    sock.setNoDelay(true);
    attachPmiSocket(sock, { mode: opts.mode, byId: opts.byId, onError: opts.onError }, opts.pace);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address();
  if (addr === null || typeof addr === "string") throw new Error("PMI_PORT listener has no TCP address");
  return {
    host,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
