import { PmiCodecError } from "./errors.ts";
import { byteLength } from "./bytes.ts";
import { V1_MAX_LINE } from "./limits.ts";
import { CMD_NAME, PmiMessage } from "./message.ts";

/**
 * PMI-1 ("v1") wire: one line of space-separated `key=value` tokens, first token `cmd=`.
 * As in MPICH's `parse_v1`: a backslash escapes the next character, a value runs to the next
 * unescaped space, a token without `=` is a bare key. Unlike MPICH an empty value (`value=`) is
 * accepted, because MPICH 4.0's client sends one for an empty string.
 */
export function parseV1(line: string): PmiMessage {
  if (line.includes("\0")) throw new PmiCodecError("NUL byte in PMI-1 line");
  if (!line.startsWith("cmd=")) throw new PmiCodecError(`PMI-1 line does not start with cmd=: ${preview(line)}`);
  const pairs: Array<[string, string | undefined]> = [];
  let cmd: string | undefined;
  let i = 0;
  while (i < line.length) {
    while (line[i] === " ") i++;
    if (i >= line.length) break;
    if (line[i] === "=") throw new PmiCodecError(`expected a key at column ${i + 1}`, cmd);
    const keyStart = i;
    while (i < line.length && line[i] !== " " && line[i] !== "=") i++;
    const key = line.slice(keyStart, i);
    let value: string | undefined;
    if (line[i] === "=") {
      const end = valueEndV1(line, ++i);
      value = unescapeV1(line.slice(i, end));
      i = end;
    }
    if (cmd === undefined) {
      if (value === undefined || !CMD_NAME.test(value)) throw new PmiCodecError(`invalid command name in ${preview(line)}`);
      cmd = value;
    } else {
      pairs.push([key, value]);
    }
  }
  if (cmd === undefined) throw new PmiCodecError("missing cmd=");
  return new PmiMessage(cmd, pairs, line);
}

/** Where a value starting at `from` ends: the next space not escaped by a backslash. */
function valueEndV1(line: string, from: number): number {
  for (let i = from; ; ) {
    const space = line.indexOf(" ", i);
    const slash = line.indexOf("\\", i);
    if (slash < 0 || space < 0 || space < slash) return space < 0 ? line.length : space;
    i = slash + 2;
  }
}

export const escapeV1 = (v: string): string => v.replace(/[\\ ]/g, (c) => `\\${c}`);

/** One flat string per value: sliced, never built a character at a time (each `+=` of a character is a string object of its own). */
export const unescapeV1 = (v: string): string => (v.includes("\\") ? v.replace(/\\(.)/g, "$1") : v);

/** Error text for `msg=`: Hydra and Slurm put underscores where spaces would be. */
export const v1Msg = (text: string): string => text.replace(/\s+/g, "_").slice(0, 200) || "error";

export type Pair = readonly [string, string | number];

/** `cmd=<cmd> k=v ...\n`; throws when a value cannot be carried or the line exceeds 1024 bytes. */
export function formatV1(cmd: string, pairs: readonly Pair[] = []): string {
  let line = `cmd=${cmd}`;
  for (const [k, raw] of pairs) {
    const v = String(raw);
    if (/[\n\0]/.test(v)) throw new PmiCodecError(`value of ${k} contains a newline or NUL`, cmd);
    if (!/^[^\s=\\]+$/.test(k)) throw new PmiCodecError(`invalid key ${JSON.stringify(k)}`, cmd);
    line += ` ${k}=${escapeV1(v)}`;
  }
  line += "\n";
  if (byteLength(line) > V1_MAX_LINE) throw new PmiCodecError(`reply longer than ${V1_MAX_LINE} bytes`, cmd);
  return line;
}

export const preview = (s: string): string => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}...` : s);
