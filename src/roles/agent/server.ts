/** The agent's listener: parents in step trees (launchers, other agents) connect to /v1/step. */
import type { Server } from "bun";
import { decode } from "../../proto/channel.ts";
import { StepDown } from "../../proto/step.ts";
import type { DownstreamHandle, StepEndpoint } from "../../tbon/pool.ts";
import type { HostPort } from "../../util/addr.ts";
import { logger } from "../../util/log.ts";

const log = logger("agent");

type Conn = { handle?: DownstreamHandle };

export function serveSteps(listen: HostPort, endpoint: StepEndpoint): Server<Conn> {
  return Bun.serve<Conn>({
    hostname: listen.host,
    port: listen.port,
    fetch(req, server) {
      if (new URL(req.url).pathname === "/v1/step" && server.upgrade(req, { data: {} })) return undefined;
      return Response.json({ error: { code: "not_found", message: "agents serve only /v1/step (WebSocket)" } }, { status: 404 });
    },
    websocket: {
      maxPayloadLength: 64 << 20,
      idleTimeout: 0,
      open(ws) {
        ws.data.handle = endpoint.attach({ send: (m) => void ws.send(JSON.stringify(m)) });
      },
      message(ws, text) {
        const d = decode(StepDown, text);
        if (!d.ok) {
          log.warn("invalid step message", { remote: ws.remoteAddress, error: d.error });
          ws.close(4400, `invalid message: ${d.error}`.slice(0, 120));
          return;
        }
        ws.data.handle!.deliver(d.value);
      },
      close(ws) {
        ws.data.handle?.closed();
      },
    },
  });
}
