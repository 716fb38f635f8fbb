/**
 * Who opened a TCP connection to a PMI_PORT listener. The listener is on loopback and any user of
 * the node may connect to it: the kernel's socket table (/proc/net/tcp, tcp6) names the owner of
 * the connecting end, so the step serves only its ranks' user.
 */
import { readFileSync } from "node:fs";

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

/** The uid of the process that connected from `peerPort` to our `port` on this host, or undefined. */
export function loopbackPeerUid(peerPort: number, port: number): number | undefined {
  if (thisTurn !== undefined) {
    const owner = socketOwner(thisTurn, peerPort, port);
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
  return socketOwner(thisTurn, peerPort, port);
}
