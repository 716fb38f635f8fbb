/** Test-only helpers for rank programs: report results to the launcher as "@<json>" lines. */
import type { TypedArray } from "../../src/comm/index.ts";

export function report(x: Record<string, unknown>): void {
  process.stdout.write(`@${JSON.stringify(x)}\n`);
}

/** The reports in a program's output, in order. */
export function parseReports(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("@"))
    .map((l) => JSON.parse(l.slice(1)) as Record<string, unknown>);
}

/** A typed array as JSON: its constructor name and its values (bigints as strings). */
export interface Shown {
  t: string;
  v: (number | string)[];
}

export function show(a: TypedArray): Shown {
  return { t: a.constructor.name, v: Array.from(a as ArrayLike<number | bigint>, (x) => (typeof x === "bigint" ? String(x) : x)) };
}

/** Replaces typed arrays (at any depth of arrays/objects) by their Shown form. */
export function plain(x: unknown): unknown {
  if (ArrayBuffer.isView(x) && !(x instanceof DataView)) return show(x as TypedArray);
  if (Array.isArray(x)) return x.map(plain);
  if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]));
  return x;
}

/** Report the error of a promise that must reject: its class, code and message. */
export async function rejection(p: Promise<unknown>): Promise<{ name: string; code?: string; message: string; rank?: number } | "resolved"> {
  try {
    await p;
    return "resolved";
  } catch (e) {
    const err = e as Error & { code?: string; rank?: number };
    return { name: err.name, code: err.code, message: err.message, rank: err.rank };
  }
}
