import type { SpawnCommand, SpawnRequest } from "./backend.ts";
import { byteLength } from "./bytes.ts";
import { PmiCodecError } from "./errors.ts";
import { setOwn } from "./outcome.ts";
import { MAX_SPAWN_COMMANDS, MAX_SPAWN_ITEMS, V2_LENGTH_FIELD, V2_MAX_PAYLOAD } from "./limits.ts";
import { CMD_NAME, PmiMessage } from "./message.ts";

/**
 * PMI-2 ("v2") wire: `<6-char length><payload>`, payload `cmd=<name>;key=val;...;`, no newline.
 * MPICH writes the length right-aligned (`%6u`), MPICH 4.0's simple PMI-2 client and Slurm
 * left-aligned; both are read like atoi. MPICH 4.0's client escapes `;` inside a value as `;;`
 * and so do we; newer MPICH does not escape at all.
 */

/** The payload length from the 6-character field. */
export function decodeV2Length(field: string): number {
  if (!/^ *\d{1,6} *$/.test(field)) throw new PmiCodecError(`bad PMI-2 length field ${JSON.stringify(field)}`);
  const n = Number(field.trim());
  if (n === 0) throw new PmiCodecError("empty PMI-2 message");
  if (n > V2_MAX_PAYLOAD) throw new PmiCodecError(`PMI-2 message of ${n} bytes exceeds ${V2_MAX_PAYLOAD}`);
  return n;
}

export function parseV2(payload: string): PmiMessage {
  if (payload.includes("\0")) throw new PmiCodecError("NUL byte in PMI-2 message");
  if (!payload.startsWith("cmd=")) throw new PmiCodecError(`PMI-2 message does not start with cmd=: ${JSON.stringify(payload.slice(0, 40))}`);
  const pairs: Array<[string, string | undefined]> = [];
  let cmd: string | undefined;
  let i = 0;
  while (i < payload.length) {
    while (payload[i] === " ") i++;
    if (i >= payload.length) break;
    const keyStart = i;
    while (i < payload.length && payload[i] !== "=" && payload[i] !== ";") i++;
    const key = payload.slice(keyStart, i);
    if (key === "") throw new PmiCodecError(`empty key at offset ${keyStart}`, cmd);
    let value: string | undefined;
    if (payload[i] === "=") {
      const end = valueEndV2(payload, ++i);
      value = payload.slice(i, end);
      if (value.includes(";;")) value = value.replaceAll(";;", ";");
      i = end;
    }
    i++; // the ';'
    if (cmd === undefined) {
      if (value === undefined || !CMD_NAME.test(value)) throw new PmiCodecError(`invalid command name in ${JSON.stringify(payload.slice(0, 40))}`);
      cmd = value;
    } else {
      pairs.push([key, value]);
    }
  }
  if (cmd === undefined) throw new PmiCodecError("missing cmd=");
  return new PmiMessage(cmd, pairs, payload);
}

/** Where a value starting at `from` ends: the next `;` that is not doubled (`;;` is a `;` inside the value). */
function valueEndV2(payload: string, from: number): number {
  for (let i = from; ; ) {
    const semi = payload.indexOf(";", i);
    if (semi < 0) return payload.length;
    if (payload[semi + 1] !== ";") return semi;
    i = semi + 2;
  }
}

export type Pair = readonly [string, string | number];

export function formatV2Payload(cmd: string, pairs: readonly Pair[] = []): string {
  let out = `cmd=${cmd};`;
  for (const [k, raw] of pairs) {
    const v = String(raw);
    if (v.includes("\0")) throw new PmiCodecError(`value of ${k} contains NUL`, cmd);
    if (!/^[^;=\s]+$/.test(k)) throw new PmiCodecError(`invalid key ${JSON.stringify(k)}`, cmd);
    out += `${k}=${v.replaceAll(";", ";;")};`;
  }
  return out;
}

/** A complete frame; throws when the payload exceeds the 64 KiB cap. */
export function formatV2(cmd: string, pairs: readonly Pair[] = []): string {
  const payload = formatV2Payload(cmd, pairs);
  const n = byteLength(payload);
  if (n > V2_MAX_PAYLOAD) throw new PmiCodecError(`PMI-2 message of ${n} bytes exceeds ${V2_MAX_PAYLOAD}`, cmd);
  return String(n).padStart(V2_LENGTH_FIELD, " ") + payload;
}

/** Error text for `errmsg=`: no `;`, one line. */
export const v2Msg = (text: string): string => text.replace(/;/g, ",").replace(/\s+/g, " ").slice(0, 500) || "error";

/** `spawn;ncmds=;preputcount=;ppkeyN=;ppvalN=;` then per command `subcmd=;maxprocs=;argc=;argvN=;infokeycount=;infokeyN=;infovalN=;`. */
export function parseV2Spawn(msg: PmiMessage): SpawnRequest {
  const head = new Map<string, string>();
  const segs: Array<Map<string, string>> = [];
  for (const [k, v] of msg.pairs) {
    if (v === undefined) continue;
    if (k === "subcmd") {
      if (segs.length >= MAX_SPAWN_COMMANDS) throw new PmiCodecError("too many spawn commands", "spawn");
      segs.push(new Map());
    }
    const target = segs[segs.length - 1] ?? head;
    if (!target.has(k)) target.set(k, v);
  }
  const num = (m: Map<string, string>, key: string, fallback?: number): number => {
    const v = m.get(key);
    if (v === undefined && fallback !== undefined) return fallback;
    if (v === undefined || !/^\d{1,9}$/.test(v)) throw new PmiCodecError(v === undefined ? `missing ${key}` : `${key} is not a count: ${v}`, "spawn");
    const n = Number(v);
    if (n > MAX_SPAWN_ITEMS) throw new PmiCodecError(`${key}=${n} is too large`, "spawn");
    return n;
  };
  const need = (m: Map<string, string>, key: string): string => {
    const v = m.get(key);
    if (v === undefined) throw new PmiCodecError(`missing ${key}`, "spawn");
    return v;
  };
  const ncmds = num(head, "ncmds");
  if (ncmds !== segs.length || ncmds < 1) throw new PmiCodecError(`ncmds=${ncmds} but ${segs.length} subcmd entries`, "spawn");
  const preput: Record<string, string> = {};
  const npre = num(head, "preputcount", 0);
  for (let i = 0; i < npre; i++) setOwn(preput, need(head, `ppkey${i}`), need(head, `ppval${i}`));
  const commands: SpawnCommand[] = segs.map((seg) => {
    const argc = num(seg, "argc", 0);
    const ninfo = num(seg, "infokeycount", 0);
    const info: Record<string, string> = {};
    for (let i = 0; i < ninfo; i++) setOwn(info, need(seg, `infokey${i}`), need(seg, `infoval${i}`));
    return {
      execname: need(seg, "subcmd"),
      args: Array.from({ length: argc }, (_, i) => need(seg, `argv${i}`)),
      maxprocs: num(seg, "maxprocs"),
      info,
    };
  });
  return { commands, preput };
}
