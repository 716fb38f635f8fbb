import type { SpawnRequest } from "./backend.ts";
import { mark } from "../util/trace.ts";
import { ByteQueue } from "./bytes.ts";
import { SocketWriter, bunConnect, type StreamTarget } from "./bun-socket.ts";
import { PmiCodecError, PmiError } from "./errors.ts";
import { V1_MAX_LINE } from "./limits.ts";
import { formatMcmdSpawn } from "./mcmd.ts";
import type { PmiMessage } from "./message.ts";
import { type Pair, formatV1, parseV1 } from "./v1.ts";

/** A byte stream to the PMI server. */
export interface PmiTransport {
  write(data: string): void;
  close(): void;
  /** Called once, before the first write. */
  listen(onData: (chunk: Uint8Array | string) => void, onClose: () => void): void;
}

/**
 * The PMI environment the agent sets, checked by hand rather than with zod: this module is loaded
 * by every rank of every Bun program, and importing zod alone costs ~40 ms of a rank's start-up
 * (measured: 50 ms vs 7 ms for an empty Bun script), which a joining rank pays inside a resize.
 */
interface PmiEnv {
  PMI_FD?: number;
  PMI_PORT?: string;
  PMI_ID?: number;
  PMI_RANK?: number;
  PMI_SIZE?: number;
  PMI_SPAWNED?: string;
  PMI_DEBUG?: string;
  EBB_PMI_PIPELINE?: string;
}

function parsePmiEnv(env: Record<string, string | undefined>): PmiEnv {
  const issues: string[] = [];
  const count = (name: "PMI_FD" | "PMI_ID" | "PMI_RANK" | "PMI_SIZE"): number | undefined => {
    const v = env[name];
    if (v === undefined) return undefined;
    if (/^\d+$/.test(v)) return Number(v);
    issues.push(`${name}: must be a non-negative integer`);
    return undefined;
  };
  const out: PmiEnv = {
    PMI_FD: count("PMI_FD"),
    PMI_ID: count("PMI_ID"),
    PMI_RANK: count("PMI_RANK"),
    PMI_SIZE: count("PMI_SIZE"),
    PMI_PORT: env.PMI_PORT,
    PMI_SPAWNED: env.PMI_SPAWNED,
    PMI_DEBUG: env.PMI_DEBUG,
    EBB_PMI_PIPELINE: env.EBB_PMI_PIPELINE,
  };
  if (out.PMI_PORT !== undefined && !/^[^:]+:\d+$/.test(out.PMI_PORT)) issues.push("PMI_PORT: must be host:port");
  if (issues.length > 0) throw new PmiError("bad_env", `PMI environment: ${issues.join("; ")}`);
  return out;
}

export interface PmiMaxes {
  kvsnameMax: number;
  keylenMax: number;
  vallenMax: number;
}

/**
 * PMI-1 client, the same exchange as MPICH's `simple_pmi.c`: a Bun rank talks to its agent over the
 * inherited `PMI_FD` (or `PMI_PORT` + `PMI_ID`). Requests are lock-step (concurrent calls queue),
 * unless the server answers PMI-1 requests in order however many are sent ahead, as ebb's agent
 * does and says with `EBB_PMI_PIPELINE=1`: then each request goes out at once and concurrent calls
 * (the handshake, a world's card gets) cost one round trip between them, not one each.
 * Values may contain spaces (escaped on the wire) but not newlines.
 */
export class PmiClient {
  private readonly input = new ByteQueue();
  private readonly readers: Array<{ resolve: (line: string) => void; reject: (e: Error) => void }> = [];
  private chain: Promise<unknown> = Promise.resolve();
  private gone: PmiError | undefined;
  rank: number;
  size: number;
  debug: boolean;
  readonly spawned: boolean;
  kvsname = "";
  maxes: PmiMaxes = { kvsnameMax: 0, keylenMax: 0, vallenMax: 0 };

  private constructor(
    private readonly transport: PmiTransport,
    ident: { rank: number; size: number; debug: boolean; spawned: boolean },
    readonly pipelined: boolean,
  ) {
    this.rank = ident.rank;
    this.size = ident.size;
    this.debug = ident.debug;
    this.spawned = ident.spawned;
    transport.listen(
      (chunk) => this.onData(chunk),
      () => this.onClose(),
    );
  }

  /** Connect from the environment the agent set: `PMI_FD` first, else `PMI_PORT` (+ `PMI_ID`). */
  static async connect(env: Record<string, string | undefined> = process.env): Promise<PmiClient> {
    const e = parsePmiEnv(env);
    const ident = {
      rank: e.PMI_RANK ?? 0,
      size: e.PMI_SIZE ?? 1,
      spawned: e.PMI_SPAWNED !== undefined && e.PMI_SPAWNED !== "0",
      debug: e.PMI_DEBUG !== undefined && e.PMI_DEBUG !== "0",
      pipelined: e.EBB_PMI_PIPELINE === "1",
    };
    if (e.PMI_FD !== undefined) {
      const t = await streamTransport({ fd: e.PMI_FD });
      mark("r.pmi-socket");
      return PmiClient.over(t, ident);
    }
    if (e.PMI_PORT !== undefined) {
      const colon = e.PMI_PORT.lastIndexOf(":");
      const transport = await streamTransport({ hostname: e.PMI_PORT.slice(0, colon), port: Number(e.PMI_PORT.slice(colon + 1)) });
      return PmiClient.over(transport, { ...ident, pmiid: e.PMI_ID });
    }
    throw new PmiError("no_pmi", "neither PMI_FD nor PMI_PORT is set: not started by ebb");
  }

  /** Handshake over any transport (tests use an in-process one). `pmiid` selects the PMI_PORT `initack`. */
  static async over(
    transport: PmiTransport,
    ident: { rank?: number; size?: number; spawned?: boolean; debug?: boolean; pmiid?: number; pipelined?: boolean },
  ): Promise<PmiClient> {
    const c = new PmiClient(
      transport,
      {
        rank: ident.rank ?? 0,
        size: ident.size ?? 1,
        spawned: ident.spawned ?? false,
        debug: ident.debug ?? false,
      },
      ident.pipelined ?? false,
    );
    try {
      // initack's reply is four lines, read after it: nothing may be pipelined behind it.
      if (ident.pmiid !== undefined) await c.initack(ident.pmiid);
      const init = c.request(formatV1("init", [["pmi_version", 1], ["pmi_subversion", 1]]), "response_to_init", false);
      // Pipelined, the rest of the handshake goes out with init. When an earlier request fails, the
      // later ones fail with it: the earlier one's error is the one thrown, theirs are dropped.
      const ahead = c.pipelined ? [c.request("cmd=get_maxes\n", "maxes"), c.request("cmd=get_my_kvsname\n", "my_kvsname")] : [];
      for (const p of [init, ...ahead]) p.catch(() => {});
      const i = await init;
      if (i.get("rc") !== "0")
        throw new PmiError("init", `PMI server refused version 1.1 (it speaks ${i.get("pmi_version")}.${i.get("pmi_subversion")})`);
      const m = await (ahead[0] ?? c.request("cmd=get_maxes\n", "maxes"));
      c.maxes = { kvsnameMax: m.int("kvsname_max") ?? 0, keylenMax: m.int("keylen_max") ?? 0, vallenMax: m.int("vallen_max") ?? 0 };
      c.kvsname = (await (ahead[1] ?? c.request("cmd=get_my_kvsname\n", "my_kvsname"))).get("kvsname") ?? "";
      return c;
    } catch (e) {
      c.close();
      throw e;
    }
  }

  async appnum(): Promise<number> {
    return (await this.request("cmd=get_appnum\n", "appnum")).int("appnum") ?? -1;
  }

  async universeSize(): Promise<number> {
    return (await this.request("cmd=get_universe_size\n", "universe_size")).int("size") ?? -1;
  }

  async put(key: string, value: string): Promise<void> {
    await this.request(this.line("put", [["kvsname", this.kvsname], ["key", key], ["value", value]]), "put_result");
  }

  /** The value as of the last fence, or undefined if the key is not there. */
  async get(key: string): Promise<string | undefined> {
    const r = await this.request(this.line("get", [["kvsname", this.kvsname], ["key", key]]), "get_result", false);
    return r.get("rc") === "0" ? (r.get("value") ?? "") : undefined;
  }

  /** PMI_Barrier: every rank's puts become visible to every rank. */
  async fence(): Promise<void> {
    await this.request("cmd=barrier_in\n", "barrier_out");
  }

  /** false if the service is already published. */
  async publish(service: string, port: string): Promise<boolean> {
    const r = await this.request(this.line("publish_name", [["service", service], ["port", port]]), "publish_result", false);
    return r.get("rc") === "0";
  }

  async lookup(service: string): Promise<string | undefined> {
    const r = await this.request(this.line("lookup_name", [["service", service]]), "lookup_result", false);
    return r.get("rc") === "0" ? r.get("port") : undefined;
  }

  async unpublish(service: string): Promise<boolean> {
    const r = await this.request(this.line("unpublish_name", [["service", service]]), "unpublish_result", false);
    return r.get("rc") === "0";
  }

  /** Start new processes; resolves with one error code per process (0 = started). */
  async spawn(req: SpawnRequest): Promise<number[]> {
    let text: string;
    try {
      text = formatMcmdSpawn(req);
    } catch (e) {
      throw new PmiError("bad_request", (e as Error).message);
    }
    for (const l of text.split("\n")) {
      if (l.length + 1 > V1_MAX_LINE) throw new PmiError("bad_request", `spawn line longer than ${V1_MAX_LINE} bytes`);
    }
    const r = await this.request(text, "spawn_result");
    const total = req.commands.reduce((n, c) => n + c.maxprocs, 0);
    const codes = r.get("errcodes");
    return codes === undefined ? new Array<number>(total).fill(0) : codes.split(",").map(Number);
  }

  /** Any other command (ebb's elastic extensions): `cmd=<cmd> k=v ...` answered by `cmd=<cmd>_result rc=0 ...`. */
  async command(cmd: string, args: Record<string, string> = {}): Promise<Record<string, string>> {
    const r = await this.request(this.line(cmd, Object.entries(args)), `${cmd}_result`);
    const out = r.args();
    delete out.rc;
    return out;
  }

  /** Ask the agent to abort the whole job; no reply comes, the connection is closed. */
  abort(code: number, message: string): void {
    try {
      this.transport.write(formatV1("abort", [["exitcode", code], ["message", message.replace(/\n/g, " ")]]));
    } catch {
      this.transport.write(formatV1("abort", [["exitcode", code]]));
    }
    this.close();
  }

  async finalize(): Promise<void> {
    await this.request("cmd=finalize\n", "finalize_ack");
    this.close();
  }

  close(): void {
    this.gone ??= new PmiError("closed", "PMI connection closed");
    for (const r of this.readers.splice(0)) r.reject(this.gone);
    try {
      this.transport.close();
    } catch {
      // already closed
    }
  }

  private async initack(pmiid: number): Promise<void> {
    const ack = await this.request(formatV1("initack", [["pmiid", pmiid]]), "initack", false);
    if (ack.get("rc") !== undefined && ack.get("rc") !== "0") throw new PmiError("initack", `PMI server rejected pmiid ${pmiid}: ${ack.get("msg")}`);
    for (const key of ["size", "rank", "debug"] as const) {
      const set = parseV1(await this.nextLine());
      const v = set.int(key);
      if (set.cmd !== "set" || v === undefined) throw new PmiError("protocol", `expected cmd=set ${key}=, got ${set.raw}`);
      if (key === "size") this.size = v;
      else if (key === "rank") this.rank = v;
      else this.debug = v !== 0;
    }
  }

  private line(cmd: string, pairs: readonly Pair[]): string {
    try {
      return formatV1(cmd, pairs);
    } catch (e) {
      throw new PmiError("bad_request", e instanceof PmiCodecError ? e.message : String(e));
    }
  }

  /** Send one request and read its reply; with `checkRc`, a nonzero rc throws. */
  private request(line: string, expect: string, checkRc = true): Promise<PmiMessage> {
    if (this.pipelined) {
      if (this.gone) return Promise.reject(this.gone);
      this.transport.write(line);
      // Replies come in request order, and each request takes its place among the readers now.
      return this.nextLine().then((reply) => this.check(line, reply, expect, checkRc));
    }
    const run = async () => {
      if (this.gone) throw this.gone;
      this.transport.write(line);
      return this.check(line, await this.nextLine(), expect, checkRc);
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  private check(line: string, reply: string, expect: string, checkRc: boolean): PmiMessage {
    let m: PmiMessage;
    try {
      m = parseV1(reply);
    } catch (e) {
      throw new PmiError("protocol", `unparsable PMI reply ${JSON.stringify(reply)}: ${(e as Error).message}`);
    }
    if (m.cmd !== expect) throw new PmiError("protocol", `expected cmd=${expect}, got ${JSON.stringify(reply)}`);
    const rc = m.get("rc");
    if (checkRc && rc !== undefined && rc !== "0")
      throw new PmiError("rc", `${line.split(/[ \n]/)[0]} failed: ${m.get("msg") ?? `rc=${rc}`}`, Number(rc));
    return m;
  }

  private nextLine(): Promise<string> {
    let line: string | undefined;
    try {
      line = this.input.takeLine(V1_MAX_LINE);
    } catch (e) {
      return Promise.reject(new PmiError("protocol", (e as Error).message));
    }
    if (line !== undefined) return Promise.resolve(line);
    if (this.gone) return Promise.reject(this.gone);
    return new Promise((resolve, reject) => this.readers.push({ resolve, reject }));
  }

  private onData(chunk: Uint8Array | string): void {
    this.input.push(chunk);
    while (this.readers.length > 0) {
      let line: string | undefined;
      try {
        line = this.input.takeLine(V1_MAX_LINE);
      } catch (e) {
        this.gone = new PmiError("protocol", (e as Error).message);
        for (const r of this.readers.splice(0)) r.reject(this.gone);
        return;
      }
      if (line === undefined) return;
      this.readers.shift()?.resolve(line);
    }
  }

  private onClose(): void {
    this.gone ??= new PmiError("disconnected", "the PMI server closed the connection");
    for (const r of this.readers.splice(0)) r.reject(this.gone);
  }
}

/**
 * The PMI connection as a byte stream: the inherited socketpair end (`PMI_FD`) or TCP
 * (`PMI_PORT`), on Bun's own sockets; node:net only where Bun is absent.
 */
async function streamTransport(target: StreamTarget): Promise<PmiTransport> {
  if (typeof Bun === "undefined") return nodeTransport(target);
  const early: Uint8Array[] = [];
  let onData: (chunk: Uint8Array) => void = (chunk) => void early.push(chunk.slice());
  let onClose = () => {};
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onClose();
  };
  const out = new SocketWriter();
  let sock: Bun.Socket<undefined>;
  try {
    sock = await bunConnect(target, { data: (_s, chunk) => onData(chunk), drain: () => out.flush(), end, close: end, error: end });
  } catch (err) {
    throw new PmiError("disconnected", `cannot reach the PMI server: ${(err as Error).message}`);
  }
  if ("port" in target) sock.setNoDelay(true);
  out.attach(sock);
  return {
    write: (data) => out.write(data),
    close: () => out.end(),
    listen(data, close) {
      onData = data;
      onClose = close;
      for (const chunk of early.splice(0)) data(chunk);
      if (ended) close();
    },
  };
}

async function nodeTransport(target: StreamTarget): Promise<PmiTransport> {
  const net = await import("node:net");
  const sock = await new Promise<import("node:net").Socket>((resolve, reject) => {
    const s = "fd" in target ? new net.Socket({ fd: target.fd, readable: true, writable: true }) : net.connect({ host: target.hostname, port: target.port });
    if ("fd" in target) return resolve(s);
    s.once("error", reject);
    s.once("connect", () => {
      s.off("error", reject);
      s.setNoDelay(true);
      resolve(s);
    });
  });
  return {
    write: (data) => void sock.write(data),
    close: () => void sock.destroy(),
    listen(onData, onClose) {
      sock.on("data", onData);
      sock.on("close", onClose);
      sock.on("error", onClose);
    },
  };
}
