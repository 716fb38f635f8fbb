import type { SpawnCommand, SpawnRequest } from "./backend.ts";
import { PmiCodecError } from "./errors.ts";
import { setOwn } from "./outcome.ts";
import { MAX_SPAWN_COMMANDS, MAX_SPAWN_ITEMS } from "./limits.ts";

/**
 * PMI-1 spawn: one `mcmd=spawn` ... `endcmd` block per command, one `key=value` per line; a value
 * is the rest of its line, taken verbatim (MPICH 4.0 sends argv unescaped). MPICH 4.0 repeats the
 * preput keys in every block, newer MPICH sends them in the first only; both are accepted.
 */

type Segment = Map<string, string>;

function segments(lines: readonly string[]): Segment[] {
  const out: Segment[] = [];
  let cur: Segment | undefined;
  for (const line of lines) {
    if (line.startsWith("mcmd=")) {
      if (line !== "mcmd=spawn") throw new PmiCodecError(`unsupported ${line}`, "spawn");
      cur = new Map();
      out.push(cur);
    } else if (line === "endcmd") {
      cur = undefined;
    } else if (cur) {
      const eq = line.indexOf("=");
      const key = eq < 0 ? line : line.slice(0, eq);
      if (eq > 0 && !cur.has(key)) cur.set(key, line.slice(eq + 1));
    } else if (line.length > 0) {
      throw new PmiCodecError(`line outside an mcmd block: ${line.slice(0, 40)}`, "spawn");
    }
  }
  return out;
}

const intOf = (seg: Segment, key: string): number | undefined => {
  const v = seg.get(key);
  return v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : undefined;
};

/** Called after each `endcmd`: is this the last block of the request? */
export function mcmdComplete(lines: readonly string[]): boolean {
  let segs: Segment[];
  try {
    segs = segments(lines);
  } catch {
    return true; // let parseMcmdSpawn report it
  }
  const first = segs[0];
  const last = segs[segs.length - 1];
  if (!first || !last) return true;
  const total = intOf(first, "totspawns");
  if (total === undefined || total < 1) return true;
  const sofar = intOf(last, "spawnssofar");
  const lastTotal = intOf(last, "totspawns");
  return segs.length >= total || (sofar !== undefined && sofar === lastTotal);
}

function count(seg: Segment, key: string, fallback?: number): number {
  const v = seg.get(key);
  if (v === undefined && fallback !== undefined) return fallback;
  const n = intOf(seg, key);
  if (n === undefined) throw new PmiCodecError(v === undefined ? `missing ${key}` : `${key} is not a count: ${v}`, "spawn");
  if (n > MAX_SPAWN_ITEMS) throw new PmiCodecError(`${key}=${n} is too large`, "spawn");
  return n;
}

function need(seg: Segment, key: string): string {
  const v = seg.get(key);
  if (v === undefined) throw new PmiCodecError(`missing ${key}`, "spawn");
  return v;
}

export function parseMcmdSpawn(lines: readonly string[]): SpawnRequest {
  const segs = segments(lines);
  const first = segs[0];
  if (!first) throw new PmiCodecError("empty spawn request", "spawn");
  const total = count(first, "totspawns");
  if (total < 1 || total > MAX_SPAWN_COMMANDS) throw new PmiCodecError(`totspawns=${total} is out of range`, "spawn");
  if (segs.length !== total) throw new PmiCodecError(`totspawns=${total} but ${segs.length} blocks`, "spawn");
  const preput: Record<string, string> = {};
  const npre = count(first, "preput_num", 0);
  for (let i = 0; i < npre; i++) setOwn(preput, need(first, `preput_key_${i}`), need(first, `preput_val_${i}`));
  const commands: SpawnCommand[] = segs.map((seg) => {
    const argc = count(seg, "argcnt", 0);
    const args = Array.from({ length: argc }, (_, i) => need(seg, `arg${i + 1}`));
    const ninfo = seg.has("info_num") ? count(seg, "info_num") : count(seg, "infonum", 0);
    const info: Record<string, string> = {};
    for (let i = 0; i < ninfo; i++) setOwn(info, need(seg, `info_key_${i}`), need(seg, `info_val_${i}`));
    return { execname: need(seg, "execname"), args, maxprocs: count(seg, "nprocs"), info };
  });
  return { commands, preput };
}

/** The request as newer MPICH writes it (preput in the first block only). */
export function formatMcmdSpawn(req: SpawnRequest): string {
  const line = (k: string, v: string | number) => {
    const s = String(v);
    if (s.includes("\n")) throw new PmiCodecError(`spawn ${k} contains a newline`, "spawn");
    return `${k}=${s}\n`;
  };
  let out = "";
  req.commands.forEach((c, n) => {
    out += `mcmd=spawn\n${line("nprocs", c.maxprocs)}${line("execname", c.execname)}`;
    out += line("totspawns", req.commands.length) + line("spawnssofar", n + 1);
    out += line("argcnt", c.args.length);
    c.args.forEach((a, i) => (out += line(`arg${i + 1}`, a)));
    if (n === 0) {
      const pre = Object.entries(req.preput);
      out += line("preput_num", pre.length);
      pre.forEach(([k, v], i) => (out += line(`preput_key_${i}`, k) + line(`preput_val_${i}`, v)));
    }
    const info = Object.entries(c.info);
    out += line("info_num", info.length);
    info.forEach(([k, v], i) => (out += line(`info_key_${i}`, k) + line(`info_val_${i}`, v)));
    out += "endcmd\n";
  });
  return out;
}
