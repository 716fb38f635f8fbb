/** "host:port" parsing for --listen and friends. Port 0 means "any free port". */
export interface HostPort {
  host: string;
  port: number;
}

export function parseHostPort(text: string): HostPort | { error: string } {
  const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(text.trim());
  if (!m) return { error: `"${text}" is not HOST:PORT (for example 127.0.0.1:7700)` };
  const port = Number(m[2]);
  if (port > 65535) return { error: `port ${port} is above 65535` };
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

export function formatHostPort(hp: HostPort): string {
  return hp.host.includes(":") ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}

// node:os (and node:net) are loaded at the first call, not with this module: every ebb/comm rank
// loads this module at start-up, and loading node:os costs several ms of its CPU.
const os = () => require("node:os") as typeof import("node:os");

/** This machine's first non-internal IPv4 address, else 127.0.0.1. */
export function firstExternalIPv4(): string {
  for (const list of Object.values(os().networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return "127.0.0.1";
}

/** Every address of this machine's interfaces. */
export function localAddresses(): string[] {
  const { isIP } = require("node:net") as typeof import("node:net");
  return Object.values(os().networkInterfaces())
    .flatMap((l) => (l ?? []).map((a) => a.address))
    .filter((a) => isIP(a) !== 0);
}
