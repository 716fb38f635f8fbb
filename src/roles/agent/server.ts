/**
 * The agent's listener: parents in step trees (launchers, other agents) connect to /v1/step.
 * A connection authenticates with its first message, a launch carrying a step credential the
 * cluster key signed; one that has not within AUTH_WINDOW_MS is closed, and a peer address may
 * hold at most MAX_UNAUTHENTICATED_PER_PEER connections that have not (the oldest goes first),
 * so idle or silent connections cannot pile up and stall launches; nor may all addresses together
 * hold more than MAX_UNAUTHENTICATED (a node's 127.0.0.x are many addresses).
 *
 * No frame may exceed FRAME_MAX (64 KiB): uWS holds a frame whole before we see it, and the cap is
 * one for every connection, so it is the cap before authentication too. An authenticated parent
 * sends longer messages in pieces (proto/frames.ts), held up to STEP_MESSAGE_MAX per connection; a
 * first message longer than a frame is preceded by its credential alone (`auth`, StepAuth).
 */
import type { Server, ServerWebSocket } from "bun";
import type { DownstreamHandle, StepEndpoint } from "../../tbon/pool.ts";
import { decodeStepDown, signatureRefusal } from "./launch-checks.ts";
import { decode } from "../../proto/channel.ts";
import { Assembler, ByteBudget, FRAME_MAX } from "../../proto/frames.ts";
import { StepAuth } from "../../proto/step.ts";
import type { Credential } from "../../proto/common.ts";
import { expiryRefusal } from "../../proto/credential.ts";
import { MAX_JSON_DEPTH } from "../../util/json.ts";
import type { HostPort } from "../../util/addr.ts";
import { logger } from "../../util/log.ts";
import { mark } from "../../util/trace.ts";
import { ByteRate } from "../../util/byte-rate.ts";
import type { ServerTls } from "../../util/tls.ts";

const log = logger("agent");

export const AUTH_WINDOW_MS = 3000;
export const MAX_UNAUTHENTICATED_PER_PEER = 16;
export const MAX_UNAUTHENTICATED = 256;
/** The most a job's authenticated connections hold of messages in pieces, together. */
export const STEP_MESSAGE_MAX = 64 << 20;
/**
 * Authenticated connections per job (the job of the credential that authenticated each): a
 * credential is the job user's, and before this cap and the expiry check, one old credential let
 * its user open connections without end, each one of the agent's descriptors.
 */
export const MAX_CONNECTIONS_PER_JOB = 256;
/**
 * What one user's authenticated connections (all their jobs' here) may send the agent together, a second, and at once: past
 * it their reading pauses until the rate pays it back. A user's launcher holds valid credentials
 * for its step, and every message it sends is parsed and validated on the agent's thread, which
 * serves every job on the node: 80 MiB of valid fence pieces at load 40 made the node miss its
 * heartbeats. A fence of KVS_MAX_BYTES (16 MiB, more as JSON) still passes in about a second.
 * In MiB; an agent's `--step-rate` sets it. (117 MiB of 60 KB messages cost an agent 1.1 s of CPU
 * at load 40: at this rate a job takes at most about a third of a core of the agent's thread.)
 */
export const STEP_MIB_PER_SECOND = 32;
/** What a message counts against the rate beyond its bytes: its parse and dispatch cost more than its bytes' worth, and small ones would come a million a second. */
export const STEP_MESSAGE_COST = 1024;
/** The most a connection holds unsent before a message is dropped and the connection closed (sendOrClose). */
export const UNSENT_MAX = 64 << 20;
/** Close codes: a frame longer than FRAME_MAX (uWS's own, 1009), pieces before a credential or past STEP_MESSAGE_MAX. */
const TOO_BIG = 4413;

type Conn = { handle?: DownstreamHandle; authed: boolean; timer?: ReturnType<typeof setTimeout>; peer: string; pieces?: Assembler; jobId?: number; rateKey?: string };

/**
 * Sends `text`, or, where Bun drops it (the connection's queue is over its limit: output windows
 * over too wide a subtree, docs/output.md), closes the connection: its parent counts the subtree
 * lost and says so, where a silent gap would lose output and exits unseen.
 */
function sendOrClose(ws: ServerWebSocket<Conn>, text: string): void {
  if (ws.send(text) !== 0 || ws.readyState !== 1) return;
  log.error(`closing the step connection from ${ws.data.peer}: a message was dropped, ${ws.getBufferedAmount()} bytes queued`);
  ws.close(1011, "step messages queued past the connection's limit");
}

/** A log.warn that says at most one thing every 10 s. */
function warner(): (text: string) => void {
  let last = 0;
  return (text) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    log.warn(text);
  };
}

/** With `tls`, the port speaks only TLS (wss://): launch credentials and step I/O never cross in the clear. */
export function serveSteps(listen: HostPort, endpoint: StepEndpoint, clusterKey: string, tls?: ServerTls, mibPerSecond = STEP_MIB_PER_SECOND, userOf: (jobId: number) => string | null = () => null): Server<Conn> {
  const bytesPerSecond = mibPerSecond * 2 ** 20;
  /** Connections not yet authenticated, by peer address, oldest first. */
  const pending = new Map<string, Set<ServerWebSocket<Conn>>>();
  /** All of them, oldest first. */
  const allPending = new Set<ServerWebSocket<Conn>>();
  const warnAtMostEvery10s = warner();
  const warnPausedAtMostEvery10s = warner();
  const forget = (ws: ServerWebSocket<Conn>) => {
    clearTimeout(ws.data.timer);
    allPending.delete(ws);
    const set = pending.get(ws.data.peer);
    set?.delete(ws);
    if (set?.size === 0) pending.delete(ws.data.peer);
  };
  const byJob = new Map<number, { conns: number; budget: ByteBudget }>();
  /**
   * One rate per user (the job's, as the controller's shares name it; the job's own until they do):
   * a user's jobs on the node share it. Kept after its last connection until it would be full
   * again, so reconnecting buys no new burst.
   */
  const rates = new Map<string, { rate: ByteRate; conns: number; forget?: ReturnType<typeof setTimeout> }>();
  const joinRate = (key: string) => {
    let r = rates.get(key);
    if (!r) rates.set(key, (r = { rate: new ByteRate(bytesPerSecond, bytesPerSecond, performance.now()), conns: 0 }));
    clearTimeout(r.forget);
    r.forget = undefined;
    r.conns++;
    return key;
  };
  const leaveRate = (key: string) => {
    const r = rates.get(key);
    if (!r || --r.conns > 0) return;
    r.forget = setTimeout(() => rates.delete(key), r.rate.take(0, performance.now()) + 1000);
  };
  /** Counts what `ws` sent; past its user's rate, reads no more of it until the rate has paid it back. */
  const pace = (ws: ServerWebSocket<Conn>, bytes: number) => {
    const wait = rates.get(ws.data.rateKey!)!.rate.take(bytes, performance.now());
    if (wait === 0 || ws.isPaused) return;
    ws.pause();
    warnPausedAtMostEvery10s(`pausing a step connection of job ${ws.data.jobId} (${ws.data.rateKey}) from ${ws.data.peer} for ${wait} ms: ${ws.data.rateKey}'s step connections sent more than ${mibPerSecond} MiB a second (--step-rate, STEP_MIB_PER_SECOND; a message counts ${STEP_MESSAGE_COST} bytes more)`);
    setTimeout(() => ws.readyState === 1 && ws.resume(), wait);
  };
  /** Why `ws` may not be authenticated by a valid credential of `jobId` (undefined: it is, now). */
  const authenticate = (ws: ServerWebSocket<Conn>, jobId: number): string | undefined => {
    forget(ws);
    let job = byJob.get(jobId);
    if (!job) byJob.set(jobId, (job = { conns: 0, budget: new ByteBudget(STEP_MESSAGE_MAX) }));
    if (job.conns >= MAX_CONNECTIONS_PER_JOB) return `more than ${MAX_CONNECTIONS_PER_JOB} step connections for job ${jobId}`;
    job.conns++;
    ws.data.authed = true;
    ws.data.jobId = jobId;
    const user = userOf(jobId);
    ws.data.rateKey = joinRate(user === null ? `job ${jobId}` : `user ${user}`);
    ws.data.pieces = new Assembler(job.budget, `job ${jobId}'s step connections'`);
    return undefined;
  };
  const unauthenticate = (ws: ServerWebSocket<Conn>) => {
    ws.data.pieces?.drop();
    const job = ws.data.jobId === undefined ? undefined : byJob.get(ws.data.jobId);
    if (job && --job.conns === 0) byJob.delete(ws.data.jobId!);
    if (ws.data.rateKey !== undefined) leaveRate(ws.data.rateKey);
  };
  /** A credential that authenticates a connection: signed by the cluster key and not expired. */
  const credentialRefusal = (cred: Credential) => signatureRefusal(clusterKey, cred) ?? expiryRefusal(cred);
  return Bun.serve<Conn>({
    hostname: listen.host,
    port: listen.port,
    tls,
    // A connection that never sends its HTTP request is closed after this many seconds.
    idleTimeout: Math.ceil(AUTH_WINDOW_MS / 1000),
    fetch(req, server) {
      const peer = server.requestIP(req)?.address ?? "?";
      if (new URL(req.url).pathname === "/v1/step" && server.upgrade(req, { data: { authed: false, peer } })) return undefined;
      return Response.json({ error: { code: "not_found", message: "agents serve only /v1/step (WebSocket)" } }, { status: 404 });
    },
    websocket: {
      maxPayloadLength: FRAME_MAX,
      // What may wait unsent before a message is dropped (Bun's default is 16 MiB). A fence's puts
      // go up in pieces (pmi/kvs-pieces.ts): up to KVS_MAX_BYTES, more as JSON, over a 1 MiB
      // output window. Whole, one message was taken into an empty queue however large; 17 pieces
      // to a slow reader can pass 16 MiB, and the last would be dropped.
      backpressureLimit: UNSENT_MAX,
      idleTimeout: 0,
      open(ws) {
        mark("a.edge-accepted");
        let set = pending.get(ws.data.peer);
        if (!set) pending.set(ws.data.peer, (set = new Set()));
        set.add(ws);
        allPending.add(ws);
        if (set.size > MAX_UNAUTHENTICATED_PER_PEER) {
          const oldest = set.values().next().value!;
          forget(oldest);
          warnAtMostEvery10s(`closing unauthenticated step connections from ${ws.data.peer}: more than ${MAX_UNAUTHENTICATED_PER_PEER} from one address`);
          oldest.close(4429, `more than ${MAX_UNAUTHENTICATED_PER_PEER} unauthenticated connections from ${ws.data.peer}`);
        } else if (allPending.size > MAX_UNAUTHENTICATED) {
          const oldest = allPending.values().next().value!;
          forget(oldest);
          warnAtMostEvery10s(`closing unauthenticated step connections: more than ${MAX_UNAUTHENTICATED} from all addresses`);
          oldest.close(4429, `more than ${MAX_UNAUTHENTICATED} unauthenticated step connections`);
        }
        ws.data.timer = setTimeout(() => {
          if (ws.data.authed) return;
          forget(ws);
          ws.close(4401, `no step credential within ${AUTH_WINDOW_MS / 1000} s`);
        }, AUTH_WINDOW_MS);
        ws.data.handle = endpoint.attach({ send: (m) => sendOrClose(ws, JSON.stringify(m)) });
      },
      message(ws, data) {
        if (!ws.data.authed) {
          if (typeof data !== "string") {
            forget(ws);
            log.warn(`closing a step connection from ${ws.data.peer}: a message in pieces before a step credential`);
            ws.close(TOO_BIG, `a message over ${FRAME_MAX} bytes before a step credential`);
            return;
          }
          // JSON.stringify puts `t` first: the one message that is not a StepDown is told by its start.
          if (data.startsWith('{"t":"auth"')) {
            const a = decode(StepAuth, data, MAX_JSON_DEPTH);
            const why = a.ok ? (credentialRefusal(a.value.cred) ?? authenticate(ws, a.value.cred.jobId)) : `invalid message: ${a.error}`;
            if (why) {
              forget(ws);
              log.warn(`closing a step connection from ${ws.data.peer}: ${why}`);
              ws.close(why.startsWith("more than") ? 4429 : 4401, why.slice(0, 120));
            }
            return;
          }
        }
        let text = data as string;
        if (ws.data.authed) {
          pace(ws, data.length + STEP_MESSAGE_COST);
          const whole = ws.data.pieces!.frame(data);
          if (whole === undefined) return;
          if ("error" in whole) {
            log.warn(`closing a step connection from ${ws.data.peer}: ${whole.error}`);
            ws.close(TOO_BIG, whole.error.slice(0, 120));
            return;
          }
          text = whole.text;
        }
        const d = decodeStepDown(text);
        if (!d.ok) {
          log.warn("invalid step message", { remote: ws.remoteAddress, error: d.error });
          ws.close(4400, `invalid message: ${d.error}`.slice(0, 120));
          return;
        }
        if (!ws.data.authed) {
          const bad = d.value.t !== "launch" && d.value.t !== "adopt" ? `a ${d.value.t} message before any launch` : credentialRefusal(d.value.cred);
          const full = bad === undefined ? authenticate(ws, (d.value as { cred: Credential }).cred.jobId) : undefined;
          const why = bad ?? full;
          if (why) {
            forget(ws);
            log.warn(`closing a step connection from ${ws.data.peer}: ${why}`);
            // A refused launch still reaches the step service, which answers it with the reason.
            if (bad && (d.value.t === "launch" || d.value.t === "adopt")) ws.data.handle!.deliver(d.value);
            ws.close(full ? 4429 : 4401, why.slice(0, 120));
            return;
          }
        }
        ws.data.handle!.deliver(d.value);
      },
      close(ws, _code, reason) {
        // uWS closes a frame over maxPayloadLength (1009 to the peer) before any handler of ours sees it.
        if (reason === "Received too big message") log.warn(`closed a step connection from ${ws.data.peer}: a frame over ${FRAME_MAX} bytes (FRAME_MAX)`);
        unauthenticate(ws);
        forget(ws);
        ws.data.handle?.closed();
      },
    },
  });
}
