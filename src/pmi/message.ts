import { setOwn } from "./outcome.ts";

/** One parsed PMI request or reply, independent of the wire it came on. Keys keep their order; the first occurrence of a key wins, as in MPICH. */
export class PmiMessage {
  constructor(
    readonly cmd: string,
    readonly pairs: ReadonlyArray<readonly [string, string | undefined]>,
    /** The line or payload as received (PMI-1 `abort` reads its free-text message from it). */
    readonly raw = "",
  ) {}

  get(key: string): string | undefined {
    for (const [k, v] of this.pairs) if (k === key && v !== undefined) return v;
    return undefined;
  }

  /** A decimal integer value, or undefined when missing or not an integer. */
  int(key: string): number | undefined {
    const v = this.get(key);
    if (v === undefined || !/^[+-]?\d{1,15}$/.test(v)) return undefined;
    return Number(v);
  }

  /** PMI-2 booleans are TRUE/FALSE. */
  bool(key: string): boolean | undefined {
    const v = this.get(key)?.toUpperCase();
    return v === "TRUE" ? true : v === "FALSE" ? false : undefined;
  }

  /** Keys with values, first occurrence wins. */
  args(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.pairs) if (v !== undefined && !Object.hasOwn(out, k)) setOwn(out, k, v);
    return out;
  }
}

/** Command names we accept and echo back in error replies. */
export const CMD_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
