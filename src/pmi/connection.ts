import type { PmiBackend } from "./backend.ts";
import { ByteQueue, byteLength } from "./bytes.ts";
import { PmiCodecError } from "./errors.ts";
import { MAX_BUFFERED, MAX_IN_FLIGHT, MAX_REPLY_BACKLOG, MCMD_MAX_BYTES, REPLY_HIGH_WATER, V1_MAX_LINE, V2_LENGTH_FIELD } from "./limits.ts";
import { mcmdComplete } from "./mcmd.ts";
import type { PmiMessage } from "./message.ts";
import { type Outcome, type Result, errorText } from "./outcome.ts";
import { formatV1, parseV1 } from "./v1.ts";
import { handleV1, spawnV1, v1Error } from "./v1-commands.ts";
import { decodeV2Length, formatV2, parseV2 } from "./v2.ts";
import { handleV2, v2Error } from "./v2-commands.ts";

export interface PmiIo {
  write(data: string): void;
  /** Close once the replies are out; `discard`: drop them and close now (a peer being cut off). */
  close(discard?: boolean): void;
  /** Bytes of replies written but not yet taken by the peer (back-pressure); 0 if unknown. */
  backlog?(): number;
}

export type PmiMode = "both" | "pmi1" | "pmi2";

export interface PmiConnectionOptions {
  /** Which protocol versions `cmd=init` may ask for (default both). */
  mode?: PmiMode;
  /** PMI_FD mode: the rank is known from the start. */
  backend?: PmiBackend;
  /** PMI_PORT mode: the rank binds itself with `cmd=initack pmiid=N` (PMI-1) or `fullinit;pmirank=N` (PMI-2). */
  byId?: (pmiid: number) => PmiBackend | undefined;
  /** Protocol errors before a rank is bound (nobody else to tell). */
  onError?: (message: string) => void;
}

/**
 * One rank's PMI connection: bytes in, replies out. Speaks PMI-1 lines until `cmd=init
 * pmi_version=2`, then PMI-2 frames. PMI-1 is lock-step, so while a reply is pending (a fence)
 * later input just waits in the buffer; PMI-2 requests are served concurrently (`thrid`). Bad
 * input gets an error reply when the protocol has one; input that cannot be framed or parsed is
 * reported through `protocolError` and closes the connection. Nothing thrown escapes `feed`.
 */
export class PmiConnection {
  private readonly input = new ByteQueue();
  private wire: 1 | 2 = 1;
  private open = true;
  private initialized = false;
  private finalized = false;
  private backend: PmiBackend | undefined;
  private busy = false;
  private inFlight = 0;
  private pumping = false;
  private mcmd: { lines: string[]; bytes: number } | undefined;
  private negotiated: 1 | 2 | undefined;

  constructor(
    private readonly io: PmiIo,
    private readonly opts: PmiConnectionOptions = {},
  ) {
    this.backend = opts.backend;
  }

  /** Protocol version agreed by `cmd=init`, if any. */
  get version(): 1 | 2 | undefined {
    return this.negotiated;
  }

  get rank(): number | undefined {
    try {
      return this.backend?.info.rank;
    } catch {
      return undefined;
    }
  }

  get isOpen(): boolean {
    return this.open;
  }

  feed(chunk: Uint8Array | string): void {
    if (!this.open) return;
    this.input.push(chunk);
    this.pump();
  }

  /** The replies waiting for the peer have gone out: requests held back may be served again. */
  drained(): void {
    if (this.open) this.pump();
  }

  private repliesWaiting(): number {
    return this.io.backlog?.() ?? 0;
  }

  /** The server is done with this rank (its step ended): what is buffered is dropped and the transport closed. */
  close(): void {
    if (this.open) this.shutdown(true);
  }

  /** The transport closed (EOF, error, process exit). */
  closed(): void {
    if (!this.open) return;
    this.open = false;
    this.input.clear();
    try {
      this.backend?.disconnected?.(this.finalized);
    } catch {
      // the agent's hook failing must not take the caller down
    }
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.open && this.step()) {}
    } catch (e) {
      this.fail(e instanceof PmiCodecError || e instanceof RangeError ? e.message : `internal error: ${errorText(e)}`);
    } finally {
      this.pumping = false;
    }
  }

  /** Handle one request if one is complete; false when waiting for more input or a pending reply. */
  private step(): boolean {
    // Back-pressure: a peer that does not read its replies gets no more until it does.
    if (this.repliesWaiting() > REPLY_HIGH_WATER) return this.checkBacklog();
    if (this.wire === 1) {
      if (this.busy) return this.checkBacklog();
      const line = this.input.takeLine(V1_MAX_LINE);
      if (line === undefined) return false;
      this.onLine(line);
      return true;
    }
    if (this.inFlight >= MAX_IN_FLIGHT) return this.checkBacklog();
    const field = this.input.peek(V2_LENGTH_FIELD);
    if (field === undefined) return false;
    const len = decodeV2Length(field);
    if (this.input.length < V2_LENGTH_FIELD + len) return false;
    this.input.take(V2_LENGTH_FIELD);
    this.onFrame(this.input.take(len));
    return true;
  }

  private checkBacklog(): false {
    if (this.input.length <= MAX_BUFFERED) return false;
    const unread = this.repliesWaiting();
    if (unread > REPLY_HIGH_WATER)
      throw new PmiCodecError(`client does not read its replies: ${unread} bytes of replies unread and ${this.input.length} bytes of requests sent behind them`);
    throw new PmiCodecError(`client sent ${this.input.length} bytes without waiting for replies`);
  }

  private onLine(line: string): void {
    if (this.mcmd) {
      this.mcmd.lines.push(line);
      this.mcmd.bytes += byteLength(line) + 1;
      if (this.mcmd.bytes > MCMD_MAX_BYTES) throw new PmiCodecError(`spawn request longer than ${MCMD_MAX_BYTES} bytes`);
      if (line === "endcmd" && mcmdComplete(this.mcmd.lines)) {
        const lines = this.mcmd.lines;
        this.mcmd = undefined;
        this.run(1, { cmd: "spawn", get: () => undefined }, (b) => spawnV1(lines, b));
      }
      return;
    }
    if (line === "") return;
    if (line.startsWith("mcmd=")) {
      this.mcmd = { lines: [line], bytes: byteLength(line) + 1 };
      return;
    }
    let msg: PmiMessage;
    try {
      msg = parseV1(line);
    } catch (e) {
      if (e instanceof PmiCodecError && e.cmd) return this.apply(v1Error(e.cmd, e.message));
      throw e;
    }
    if (msg.cmd === "init") return this.apply(this.init(msg));
    if (msg.cmd === "initack") return this.apply(this.initack(msg));
    this.run(1, msg, (b) => handleV1(msg, b));
  }

  private onFrame(payload: string): void {
    let msg: PmiMessage;
    try {
      msg = parseV2(payload);
    } catch (e) {
      if (e instanceof PmiCodecError && e.cmd) return this.apply(v2Error({ cmd: e.cmd, get: () => undefined }, e.message));
      throw e;
    }
    if (msg.cmd === "fullinit") return this.apply(this.fullinit(msg));
    this.run(2, msg, (b) => handleV2(msg, b));
  }

  /** Run a command that needs a bound, initialized rank; errors become error replies. */
  private run(wire: 1 | 2, msg: Pick<PmiMessage, "cmd" | "get">, handler: (b: PmiBackend) => Result): void {
    const fallback = (text: string): Outcome => (wire === 1 ? v1Error(msg.cmd, text) : v2Error(msg, text));
    const b = this.backend;
    if (!b || !this.initialized) return this.apply(fallback(wire === 1 ? "init required" : "fullinit required"));
    let result: Result;
    try {
      result = handler(b);
    } catch (e) {
      result = fallback(errorText(e));
    }
    if (!(result instanceof Promise)) return this.apply(result);
    if (wire === 1) this.busy = true;
    else this.inFlight++;
    result
      .catch((e: unknown) => fallback(errorText(e)))
      .then((outcome) => {
        if (wire === 1) this.busy = false;
        else this.inFlight--;
        this.apply(outcome);
        this.pump();
      })
      .catch((e: unknown) => this.fail(`internal error: ${errorText(e)}`));
  }

  private apply(o: Outcome): void {
    if (!this.open) return;
    if (o.finalized) this.finalized = true;
    if (o.reply !== undefined) {
      try {
        this.io.write(o.reply);
      } catch {
        return this.closed();
      }
      const unread = this.repliesWaiting();
      if (unread > MAX_REPLY_BACKLOG) return this.fail(`client does not read its replies: ${unread} bytes of replies unread`);
    }
    if (o.wire === 2) this.wire = 2;
    // A failure that has its answer (a refused init) lets the answer out before closing.
    if (o.fail !== undefined) return this.fail(o.fail, o.reply === undefined);
    if (o.close) this.shutdown();
  }

  private init(m: PmiMessage): Outcome {
    const version = m.int("pmi_version");
    const sub = m.int("pmi_subversion");
    const mode = this.opts.mode ?? "both";
    if (version === 1 && sub !== undefined && sub <= 2 && mode !== "pmi2") {
      const ok = formatV1("response_to_init", [["pmi_version", 1], ["pmi_subversion", 1], ["rc", 0]]);
      if (!this.backend) {
        return {
          reply: formatV1("response_to_init", [["pmi_version", 1], ["pmi_subversion", 1], ["rc", -1], ["msg", "send_initack_first"]]),
          fail: "PMI_PORT client sent init without initack (is PMI_ID set?)",
        };
      }
      this.initialized = true;
      this.negotiated = 1;
      return { reply: ok };
    }
    if (version === 2 && sub === 0 && mode !== "pmi1") {
      this.negotiated = 2;
      return { reply: formatV1("response_to_init", [["pmi_version", 2], ["pmi_subversion", 0], ["rc", 0]]), wire: 2 };
    }
    const [v, sv]: [number, number] = mode === "pmi2" ? [2, 0] : [1, 1];
    const asked = `${m.get("pmi_version") ?? "?"}.${m.get("pmi_subversion") ?? "?"}`;
    const reply = formatV1("response_to_init", [["pmi_version", v], ["pmi_subversion", sv], ["rc", -1], ["msg", `unsupported_PMI_version_${asked}`]]);
    // A client of the version this step does not serve: say so to the user, not only to the client
    // (MPICH's answer to the refusal is an abort with a code that names nothing).
    const other = version === 1 && mode === "pmi2" ? 1 : version === 2 && mode === "pmi1" ? 2 : undefined;
    if (other !== undefined) return { reply, fail: `this MPI speaks PMI-${other}; use --mpi pmi${other} or both` };
    return { reply };
  }

  /** PMI_PORT handshake: Hydra's 4-line reply. */
  private initack(m: PmiMessage): Outcome {
    const id = m.int("pmiid");
    const b = this.bindable(id);
    if (!b) {
      const why = id === undefined ? "initack without a valid pmiid" : `no rank with pmiid ${id}`;
      return { reply: formatV1("initack", [["rc", -1], ["msg", why.replaceAll(" ", "_")]]), fail: why };
    }
    this.backend = b;
    const { size, rank, debug } = b.info;
    return { reply: `cmd=initack\ncmd=set size=${size}\ncmd=set rank=${rank}\ncmd=set debug=${debug ? 1 : 0}\n` };
  }

  private fullinit(m: PmiMessage): Outcome {
    const id = m.int("pmirank") ?? m.int("srcid");
    let b = this.backend;
    if (!b) {
      b = this.bindable(id);
      if (!b) {
        const why = id === undefined ? "fullinit without pmirank" : `no rank with pmirank ${id}`;
        return { ...v2Error(m, why), fail: why };
      }
      this.backend = b;
    } else if (id !== undefined && id !== b.info.rank) {
      return v2Error(m, `pmirank ${id} does not match rank ${b.info.rank} of this connection`);
    }
    this.initialized = true;
    const info = b.info;
    const thrid = m.get("thrid");
    return {
      reply: formatV2("fullinit-response", [
        ...(thrid === undefined ? [] : [["thrid", thrid] as const]),
        ["pmi-version", 2],
        ["pmi-subversion", 0],
        ["rank", info.rank],
        ["size", info.size],
        ["appnum", info.appnum],
        ...(info.spawned ? [["spawner-jobid", info.spawnerJobId ?? info.jobId] as const] : []),
        ["debugged", info.debug ? "TRUE" : "FALSE"],
        ["pmiverbose", info.debug ? "TRUE" : "FALSE"],
        ["rc", 0],
      ]),
    };
  }

  private bindable(id: number | undefined): PmiBackend | undefined {
    if (id === undefined) return undefined;
    let b: PmiBackend | undefined;
    try {
      b = this.opts.byId?.(id);
    } catch {
      b = undefined;
    }
    b ??= this.backend?.info.rank === id ? this.backend : undefined;
    if (b && this.backend && b !== this.backend) return undefined;
    return b;
  }

  private fail(detail: string, discard = true): void {
    if (!this.open) return;
    const b = this.backend;
    const rank = this.rank;
    const message = `PMI protocol error from ${rank !== undefined ? `rank ${rank}` : "an unidentified PMI connection"}: ${detail}`;
    this.shutdown(discard);
    try {
      if (b) b.protocolError(message);
      else this.opts.onError?.(message);
    } catch {
      // reporting must not throw into feed()
    }
  }

  private shutdown(discard = false): void {
    this.open = false;
    this.input.clear();
    this.mcmd = undefined;
    try {
      this.io.close(discard);
    } catch {
      // already gone
    }
  }
}
