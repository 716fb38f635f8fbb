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
import { logger } from "../../util/log.ts";
import { MicrotaskBatch } from "../../util/microtask-batch.ts";
import type { ServerTls } from "../../util/tls.ts";

const log = logger("controller");

/** `refuse`: an agent whose key is wrong, told so over the socket (an HTTP 401 reaches it without its body). */
type Conn = { kind: "agent" | "launcher"; scope: Scope; session?: Session<unknown>; refuse?: string };

export interface ServeOptions {
  listen: HostPort;
  /** HTTPS and WSS only: the API, agents' and launchers' links. */
  tls?: ServerTls;
  api: Hono<any>;
  authorizeAgent(token: string): boolean;
  authorizeLauncher(token: string): Scope | undefined;
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
  const out = new MicrotaskBatch<string>((texts) => {
    if (texts.length === 1) ws.send(texts[0]!);
    else ws.cork(() => texts.forEach((text) => ws.send(text)));
  });
  return {
    remote,
    send: (msg) => out.push(JSON.stringify(msg)),
    close: (code, reason) => {
      out.flush();
      ws.close(code, reason);
    },
  };
}

export function serve(o: ServeOptions): Server<Conn> {
  return Bun.serve<Conn>({
    hostname: o.listen.host,
    port: o.listen.port,
    tls: o.tls,
    idleTimeout: 60,
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
        if (server.upgrade(req, { data: { kind: "launcher", scope } })) return undefined;
        return upgradeRequired();
      }
      return o.api.fetch(req);
    },
    websocket: {
      maxPayloadLength: 16 << 20,
      idleTimeout: 120,
      sendPings: true,
      open(ws) {
        ws.data.session = session(ws);
        if (ws.data.refuse) {
          log.warn(`refused an agent from ${ws.remoteAddress}: ${ws.data.refuse}`);
          ws.close(REFUSED.badKey, ws.data.refuse);
        }
      },
      message(ws, text) {
        if (ws.data.refuse) return;
        const s = ws.data.session!;
        if (ws.data.kind === "agent") o.agents.onMessage(s as never, text);
        else o.launchers.onMessage(s as never, ws.data.scope, text);
      },
      close(ws) {
        if (ws.data.refuse) return;
        const s = ws.data.session!;
        if (ws.data.kind === "agent") o.agents.onClose(s as never);
        else o.launchers.onClose(s as never);
      },
    },
  });
}
