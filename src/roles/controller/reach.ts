/**
 * Whether the controller can reach the address an agent advertises: a TCP connection, and in a TLS
 * cluster a TLS handshake whose certificate the cluster CA signed for an agent (DNS:ebb-agent) or
 * for the host connected to, the check launchers make when they open a step there.
 */
import { createConnection, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { parseHostPort } from "../../util/addr.ts";
import { clientTls } from "../../util/tls.ts";

/**
 * Undefined when an agent's HOST:PORT accepts a connection within `timeoutMs` (with `ca`: and
 * presents an agent's certificate `ca` signed); else why the agent is refused, and what to fix.
 */
export function unreachable(addr: string, ca?: string, timeoutMs = 3000): Promise<string | undefined> {
  const hp = parseHostPort(addr);
  const cannot = (why: string) => `the controller cannot reach its address ${addr} (${why}); fix --advertise/--listen or the firewall`;
  if ("error" in hp) return Promise.resolve(cannot(hp.error));
  return new Promise((resolve) => {
    let socket: Socket;
    const done = (why: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(cannot(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    if (ca === undefined) {
      socket = createConnection({ host: hp.host, port: hp.port });
      socket.once("connect", () => done(undefined));
    } else {
      socket = tlsConnect({ host: hp.host, port: hp.port, ...clientTls(ca, "agent"), rejectUnauthorized: true });
      socket.once("secureConnect", () => done(undefined));
    }
    socket.once("error", (e: NodeJS.ErrnoException) => done((ca === undefined ? undefined : certificateFault(addr, e)) ?? cannot(e.code ?? e.message)));
  });
}

/**
 * What a failed handshake says about the agent's certificate, if it was that: short enough for a
 * WebSocket close reason (123 bytes) up to the details in parentheses, which the controller's log keeps.
 */
function certificateFault(addr: string, e: NodeJS.ErrnoException): string | undefined {
  const code = e.code ?? "";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return `its step port ${addr} has a certificate for neither ebb-agent nor that host; use one the CA issued for agents (${e.message.replace(/:\s*$/, "")})`;
  if (/CERT|VERIFY|SELF_SIGNED|ISSUER/i.test(code)) return `its step port ${addr} has a certificate the cluster CA did not sign; use one the CA issued for agents (${code})`;
  return undefined;
}
