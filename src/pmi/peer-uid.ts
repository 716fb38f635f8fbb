/**
 * Who opened a TCP connection to a PMI_PORT listener. The listener is on loopback and any user of
 * the node may connect to it: the kernel's socket table (/proc/net/tcp, tcp6) names the owner of
 * the connecting end, so the step serves only its ranks' user. Asked for the one socket through
 * netlink where the kernel answers (sock-diag.ts), else read from /proc/net/tcp and tcp6.
 */
import { readFileSync } from "node:fs";
import { tcpSocketOwner } from "./sock-diag.ts";

/**
 * The uid owning the socket whose local port is `localPort` and remote port `remotePort`, from
 * the text of /proc/net/tcp or tcp6; undefined if no line, or lines of different owners, match.
 */
export function socketOwner(table: string, localPort: number, remotePort: number): number | undefined {
  const owners = new Set<number>();
  for (const line of table.split("\n").slice(1)) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const port = (addr: string | undefined) => parseInt(addr?.slice(addr.lastIndexOf(":") + 1) ?? "", 16);
    if (port(f[1]) === localPort && port(f[2]) === remotePort) owners.add(Number(f[7]));
  }
  return owners.size === 1 ? [...owners][0] : undefined;
}

/** The socket tables as read in this turn of the event loop: a burst of connections accepted together reads them once. */
let thisTurn: string | undefined;

/** Whether the kernel answers exact look-ups here (sock-diag.ts): asked once, of the listener itself. */
let exact: boolean | undefined;

/**
 * The uid of the process that opened a connection from `peer` to our listener at `local` on this
 * host, or undefined. Asked of the kernel for that one socket where it answers; else read from
 * its whole table (once per turn).
 */
export function loopbackPeerUid(peer: { address: string; port: number }, local: { address: string; port: number }): number | undefined {
  exact ??= typeof tcpSocketOwner({ local, remote: { address: local.address.includes(":") ? "::" : "0.0.0.0", port: 0 } }) === "number";
  if (exact) return tcpSocketOwner({ local: peer, remote: local }) ?? undefined;
  if (thisTurn !== undefined) {
    const owner = socketOwner(thisTurn, peer.port, local.port);
    if (owner !== undefined) return owner;
  }
  thisTurn = ["/proc/net/tcp", "/proc/net/tcp6"]
    .map((p) => {
      try {
        return readFileSync(p, "utf8");
      } catch {
        return "";
      }
    })
    .join("\n");
  setImmediate(() => (thisTurn = undefined));
  return socketOwner(thisTurn, peer.port, local.port);
}
