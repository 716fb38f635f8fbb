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
