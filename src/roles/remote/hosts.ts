/**
 * The hosts of `ebb up --hosts a,b,c` / `--hostfile FILE`: `[user@]host[:port]`, and in a host
 * file one host a line, `#` comments, and an optional `slots=N` (the CPUs its agent offers).
 */
export interface HostSpec {
  /** The node's name: the host as given, without user or port. */
  name: string;
  /** What ssh is given as the destination (an alias of ~/.ssh/config works). */
  host: string;
  user?: string;
  port?: number;
  slots?: number;
}

const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** One host word; an error text naming it when malformed. */
export function parseHost(word: string, slots?: number): HostSpec | { error: string } {
  const m = /^(?:([^@\s:]+)@)?(\[[^\]]+\]|[^@\s:[\]]+)(?::(\d{1,5}))?$/.exec(word);
  if (!m) return { error: `"${word}" is not a host: give [user@]host[:port]` };
  const host = m[2]!.replace(/^\[|\]$/g, "");
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return { error: `"${word}": port ${port} is not 1-65535` };
  const name = host.replace(/:/g, "-");
  if (!NODE_NAME.test(name)) return { error: `"${word}": ${host} cannot be a node name (letters, digits, '.', '_', '-')` };
  return { name, host, user: m[1], port, slots };
}

function checked(specs: (HostSpec | { error: string })[]): HostSpec[] | { error: string } {
  const out: HostSpec[] = [];
  const seen = new Set<string>();
  for (const s of specs) {
    if ("error" in s) return s;
    if (seen.has(s.name)) return { error: `host ${s.name} is given twice` };
    seen.add(s.name);
    out.push(s);
  }
  if (out.length === 0) return { error: "no hosts given" };
  return out;
}

/** `--hosts a,b,c`. */
export function parseHostsFlag(text: string): HostSpec[] | { error: string } {
  return checked(text.split(",").map((w) => w.trim()).filter(Boolean).map((w) => parseHost(w)));
}

/** A host file's text; errors name the line. */
export function parseHostfile(text: string): HostSpec[] | { error: string } {
  const specs: (HostSpec | { error: string })[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.replace(/#.*$/, "").trim();
    if (!line) continue;
    const [word, ...rest] = line.split(/\s+/);
    let slots: number | undefined;
    for (const opt of rest) {
      const s = /^slots=(\d+)$/.exec(opt);
      if (!s || Number(s[1]) < 1) {
        specs.push({ error: `line ${i + 1}: "${opt}" is not slots=N (N >= 1)` });
        continue;
      }
      slots = Number(s[1]);
    }
    const spec = parseHost(word!, slots);
    specs.push("error" in spec ? { error: `line ${i + 1}: ${spec.error}` } : spec);
  }
  return checked(specs);
}
