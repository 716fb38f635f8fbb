/** One Bun server: /v1/agent and /v1/launcher upgrade to WebSockets, everything else is the API. */
import type { Server, ServerWebSocket } from "bun";
import type { Hono } from "hono";
import { MAX_BODY } from "../../api/app.ts";
import type { HostPort } from "../../util/addr.ts";
import type { Scope } from "../../domain/scope.ts";
import type { AgentHub } from "./agents.ts";
import type { LauncherHub } from "./launchers.ts";
import type { Session } from "./state.ts";
import { REFUSED } from "../../proto/agent.ts";
import { Assembler, ByteBudget, FRAME_MAX } from "../../proto/frames.ts";
import { LAUNCHER_UNREAD_MAX, LAUNCHERS_REFUSED } from "../../proto/launcher.ts";
import { Refusal } from "../../domain/refusal.ts";
import { UserBytes } from "../../domain/user-bytes.ts";
import { UserSlots } from "../../domain/user-slots.ts";
import { readFileSync } from "node:fs";
import { logger } from "../../util/log.ts";
import { MicrotaskBatch } from "../../util/microtask-batch.ts";
import type { ServerTls } from "../../util/tls.ts";

const log = logger("controller");

/**
 * `refuse`: an agent whose key is wrong, or a launcher over its user's share of connections, told
 * so over the socket (an HTTP error reaches a WebSocket client without its body). `release`: the
 * launcher's slot (launcherSlots), given back when it closes.
 */
type Conn = { kind: "agent" | "launcher"; scope: Scope; session?: Session<unknown>; refuse?: string; release?: () => void; user?: string; pieces?: Assembler };

/**
 * What a message longer than a frame (FRAME_MAX, proto/frames.ts) may hold while it arrives in
 * pieces: one user's launcher connections together, and one agent's connection. Before, each
 * launcher connection could hold a 16 MiB frame, and a user may open thousands of them.
 */
export const LAUNCHER_PIECES_PER_USER = 16 << 20;
export const AGENT_PIECES_MAX = 64 << 20;
/** Seconds a connection may be silent (see serve); a long-poll's or a stream's. */
export const IDLE_S = 10;
const LONG_IDLE_S = 60;

/** Close code: a message past its budget of pieces. */
const TOO_BIG = 4413;

/**
 * Launcher connections (`ebb run`s and steps' `srun`s, each one descriptor) one user may hold: a
 * sixteenth of the controller's descriptors, 64 to 4,096, so that no user can take them all from
 * the agents and the other users. Every token acting for a user counts (theirs, their jobs').
 */
export function launcherSlots(limits = readFileSync("/proc/self/limits", "utf8")): UserSlots {
  const fds = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? 1024);
  const perUser = Math.max(64, Math.min(4096, Math.floor(fds / 16)));
  return new UserSlots(
    perUser,
    (user, n) => new Refusal("too_many", "too_many_launchers", `${user} has ${n} launcher connections open (ebb run, srun: one each), the most one user may (a sixteenth of the controller's ${fds} file descriptors); let some end and try again`),
  );
}

export interface ServeOptions {
  listen: HostPort;
  /** HTTPS and WSS only: the API, agents' and launchers' links. */
  tls?: ServerTls;
  api: Hono<any>;
  authorizeAgent(token: string): boolean;
  authorizeLauncher(token: string): Scope | undefined;
  /** Whose a launcher's scope is, for its slot. */
  userOf(scope: Scope): string;
  launcherSlots: UserSlots;
  agents: AgentHub;
  launchers: LauncherHub;
}

function bearer(req: Request): string {
  return /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
}

function unauthorized(message: string): Response {
  return Response.json({ error: { code: "unauthorized", message } }, { status: 401 });
}

function upgradeRequired(): Response {
  return Response.json({ error: { code: "upgrade_required", message: "this is a WebSocket: send Upgrade: websocket with Connection: Upgrade and a Sec-WebSocket-Key" } }, { status: 426 });
}

/**
 * A socket's session. What is sent to it in one run of code (a pass's job.start after its shares,
 * an end's shares before its job.kill, a turn's acks) goes out in one write, once that code is
 * done (a microtask): outside Bun's own callbacks each send was a system call of its own. Still
 * one message per frame, in the order sent; a close sends what is queued first.
 */
function session(ws: ServerWebSocket<Conn>): Session<unknown> {
  const remote = ws.remoteAddress;
  const launcher = ws.data.kind === "launcher";
  const out = new MicrotaskBatch<string>((texts) => {
    if (texts.length === 1) ws.send(texts[0]!);
    else ws.cork(() => texts.forEach((text) => ws.send(text)));
    if (launcher && ws.getBufferedAmount() > LAUNCHER_UNREAD_MAX) {
      // Cut, not closed: a close frame would wait behind what it does not read.
      log.warn(`cut off a launcher from ${remote}: it has not read the last ${ws.getBufferedAmount()} bytes sent to it, over the ${LAUNCHER_UNREAD_MAX} a launcher may leave unread`);
      ws.terminate();
    }
  });
  return {
    remote,
    send: (msg) => out.push(JSON.stringify(msg)),
    flush: () => out.flush(),
    close: (code, reason) => {
      out.flush();
      ws.close(code, reason);
    },
  };
}

export function serve(o: ServeOptions): Server<Conn> {
  const pieces = new UserBytes(LAUNCHER_PIECES_PER_USER);
  return Bun.serve<Conn>({
    hostname: o.listen.host,
    port: o.listen.port,
    tls: o.tls,
    // A kept-alive connection that sends nothing after its last answer is closed after IDLE_S (was
    // 60 s): a flood of idle connections holds descriptors seconds, not a minute. (One that never
    // completes a request Bun closes after ~10 s of its own, whatever this says.) The requests
    // that may be silent longer (a job's ?wait=, up to 50 s; the timeline stream, a keep-alive
    // within 30 s) are given LONG_IDLE_S each.
    idleTimeout: IDLE_S,
    // Bun's own ceiling; the API counts every body against its smaller limit while reading it.
    maxRequestBodySize: 2 * MAX_BODY,
    fetch(req, server) {
      const path = new URL(req.url).pathname;
      if (path === "/v1/agent") {
        const refuse = o.authorizeAgent(bearer(req)) ? undefined : "wrong cluster key: copy cluster.key from the controller's state dir to the agent";
        if (server.upgrade(req, { data: { kind: "agent", scope: "all", refuse } })) return undefined;
        if (refuse) return unauthorized("agents authenticate with the cluster key (file cluster.key in the controller's state dir)");
        return upgradeRequired();
      }
      if (path === "/v1/launcher") {
        const scope = o.authorizeLauncher(bearer(req));
        if (scope === undefined) return unauthorized("launchers authenticate with the API token or their job's token");
        let release: (() => void) | undefined;
        let refuse: string | undefined;
        const user = o.userOf(scope);
        try {
          release = o.launcherSlots.take(user);
        } catch (e) {
          if (!(e instanceof Refusal)) throw e;
          refuse = e.message;
        }
        if (server.upgrade(req, { data: { kind: "launcher", scope, refuse, release, user } })) return undefined;
        release?.();
        return upgradeRequired();
      }
      if (path === "/v1/stream" || (path.startsWith("/v1/jobs/") && new URL(req.url).searchParams.has("wait"))) server.timeout(req, LONG_IDLE_S);
      return o.api.fetch(req);
    },
    websocket: {
      // uWS holds a frame whole before a handler sees it: longer messages come in pieces (frames.ts).
      maxPayloadLength: FRAME_MAX,
      idleTimeout: 120,
      sendPings: true,
      open(ws) {
        ws.data.session = session(ws);
        ws.data.pieces =
          ws.data.kind === "agent" ? new Assembler(new ByteBudget(AGENT_PIECES_MAX), "an agent's connection's") : new Assembler(pieces.of(ws.data.user!), `${ws.data.user}'s launcher connections'`);
        if (ws.data.refuse && ws.data.kind === "launcher") {
          log.warn(`refused a launcher from ${ws.remoteAddress}: ${ws.data.refuse}`);
          ws.send(JSON.stringify({ t: "error", code: "too_many_launchers", message: ws.data.refuse }));
          ws.close(LAUNCHERS_REFUSED, "too many launchers");
        } else if (ws.data.refuse) {
          log.warn(`refused an agent from ${ws.remoteAddress}: ${ws.data.refuse}`);
          ws.close(REFUSED.badKey, ws.data.refuse);
        }
      },
      message(ws, data) {
        if (ws.data.refuse) return;
        const whole = ws.data.pieces!.frame(data);
        if (whole === undefined) return;
        if ("error" in whole) {
          log.warn(`closed a${ws.data.kind === "agent" ? "n agent" : " launcher"} connection from ${ws.remoteAddress}: ${whole.error}`);
          ws.close(TOO_BIG, whole.error.slice(0, 120));
          return;
        }
        const text = whole.text;
        const s = ws.data.session!;
        if (ws.data.kind === "agent") o.agents.onMessage(s as never, text);
        else o.launchers.onMessage(s as never, ws.data.scope, text);
      },
      close(ws, _code, reason) {
        ws.data.release?.();
        ws.data.pieces?.drop();
        // uWS closes a frame over maxPayloadLength (1009 to the peer) before a handler of ours sees it.
        if (reason === "Received too big message") log.warn(`closed a${ws.data.kind === "agent" ? "n agent" : " launcher"} connection from ${ws.remoteAddress}: a frame over ${FRAME_MAX} bytes (FRAME_MAX)`);
        if (ws.data.refuse) return;
        const s = ws.data.session!;
        if (ws.data.kind === "agent") o.agents.onClose(s as never);
        else o.launchers.onClose(s as never);
      },
    },
  });
}
