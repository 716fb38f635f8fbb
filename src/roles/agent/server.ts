/**
 * The agent's listener: parents in step trees (launchers, other agents) connect to /v1/step.
 * A connection authenticates with its first message, a launch carrying a step credential the
 * cluster key signed; one that has not within AUTH_WINDOW_MS is closed, and a peer address may
 * hold at most MAX_UNAUTHENTICATED_PER_PEER connections that have not (the oldest goes first),
 * so idle or silent connections cannot pile up and stall launches.
 */
import type { Server, ServerWebSocket } from "bun";
import type { DownstreamHandle, StepEndpoint } from "../../tbon/pool.ts";
import { decodeStepDown, signatureRefusal } from "./launch-checks.ts";
import type { HostPort } from "../../util/addr.ts";
import { logger } from "../../util/log.ts";
import type { ServerTls } from "../../util/tls.ts";

const log = logger("agent");

export const AUTH_WINDOW_MS = 3000;
export const MAX_UNAUTHENTICATED_PER_PEER = 16;

type Conn = { handle?: DownstreamHandle; authed: boolean; timer?: ReturnType<typeof setTimeout>; peer: string };

/** With `tls`, the port speaks only TLS (wss://): launch credentials and step I/O never cross in the clear. */
export function serveSteps(listen: HostPort, endpoint: StepEndpoint, clusterKey: string, tls?: ServerTls): Server<Conn> {
  /** Connections not yet authenticated, by peer address, oldest first. */
  const pending = new Map<string, Set<ServerWebSocket<Conn>>>();
  let lastWarned = 0;
  const forget = (ws: ServerWebSocket<Conn>) => {
    clearTimeout(ws.data.timer);
    const set = pending.get(ws.data.peer);
    set?.delete(ws);
    if (set?.size === 0) pending.delete(ws.data.peer);
  };
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
      maxPayloadLength: 64 << 20,
      idleTimeout: 0,
      open(ws) {
        let set = pending.get(ws.data.peer);
        if (!set) pending.set(ws.data.peer, (set = new Set()));
        set.add(ws);
        if (set.size > MAX_UNAUTHENTICATED_PER_PEER) {
          const oldest = set.values().next().value!;
          forget(oldest);
          if (Date.now() - lastWarned > 10_000) {
            lastWarned = Date.now();
            log.warn(`closing unauthenticated step connections from ${ws.data.peer}: more than ${MAX_UNAUTHENTICATED_PER_PEER} from one address`);
          }
          oldest.close(4429, `more than ${MAX_UNAUTHENTICATED_PER_PEER} unauthenticated connections from ${ws.data.peer}`);
        }
        ws.data.timer = setTimeout(() => {
          if (ws.data.authed) return;
          forget(ws);
          ws.close(4401, `no step credential within ${AUTH_WINDOW_MS / 1000} s`);
        }, AUTH_WINDOW_MS);
        ws.data.handle = endpoint.attach({ send: (m) => void ws.send(JSON.stringify(m)) });
      },
      message(ws, text) {
        const d = decodeStepDown(text);
        if (!d.ok) {
          log.warn("invalid step message", { remote: ws.remoteAddress, error: d.error });
          ws.close(4400, `invalid message: ${d.error}`.slice(0, 120));
          return;
        }
        if (!ws.data.authed) {
          const why = d.value.t !== "launch" && d.value.t !== "adopt" ? `a ${d.value.t} message before any launch` : signatureRefusal(clusterKey, d.value.cred);
          if (why) {
            forget(ws);
            log.warn(`closing a step connection from ${ws.data.peer}: ${why}`);
            // The launch still reaches the step service, which answers it with the reason.
            if (d.value.t === "launch" || d.value.t === "adopt") ws.data.handle!.deliver(d.value);
            ws.close(4401, why.slice(0, 120));
            return;
          }
          ws.data.authed = true;
          forget(ws);
        }
        ws.data.handle!.deliver(d.value);
      },
      close(ws) {
        forget(ws);
        ws.data.handle?.closed();
      },
    },
  });
}
