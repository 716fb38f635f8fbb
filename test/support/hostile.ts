/**
 * Seeded hostile values for fuzzing: from a JSON schema (the API's OpenAPI document, generated from
 * its zod schemas), values of the right type and structure with hostile content: numbers at, just
 * past and far past each bound; strings at and just over each length limit, with NUL and other
 * control bytes, lone surrogates, path traversal and `%` patterns; arrays at and over their caps
 * (bounded: see `maxArray`), duplicated elements, extra and duplicate keys, deep nesting. `hints`
 * give what a schema cannot say (which strings are job ids, paths, node names), by field path.
 */
import { mulberry32 } from "../../src/sim/random.ts";

/** The simulator's seeded generator (mulberry32), with the draws a fuzzer needs. */
export function rng(seed: number) {
  const { next } = mulberry32(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Rng = ReturnType<typeof rng>;

export type JsonSchema = {
  type?: string | string[];
  anyOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
};

/** Strings that have broken servers before: control bytes, encodings, traversal, format and injection patterns. */
export const NASTY = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\u0007\u0008\u001b[2J",
  "\n",
  "\r\n",
  "\t",
  "\u007f",
  "../../etc/passwd",
  "../../../../../../../../root/.ssh/authorized_keys",
  "/root/.bashrc",
  "/etc/shadow",
  "/proc/self/environ",
  "/dev/zero",
  "%j%x%A%a%N%u%%",
  "%s%s%s%n",
  "%00",
  "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
  "💥",
  "\ud800",
  "\udfff\ud800",
  "\u202egnp.exe",
  "\ufeff",
  "Ω≈ç√∫",
  "9".repeat(400),
  "-1",
  "-0",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e309",
  "0x10",
  "null",
  "undefined",
  "true",
  "{}",
  "[]",
  "__proto__",
  "constructor",
  "'; DROP TABLE jobs; --",
  "\" OR 1=1 --",
  "$(reboot)",
  "`id`",
  "${PATH}",
  "0-20000",
  "afterok:1",
  "1-3%0",
  "PENDING",
  "2030-01-01T00:00:00Z",
];

const DATES = ["2030-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-02-30T00:00:00Z", "2030-01-01T00:00:00+23:59", "2030-01-01T00:00:00.999999999999Z", "+275760-09-13T00:00:00Z", "2030-01-01", "2030-01-01T24:00:00Z"];

export function randomString(r: Rng, max = 5000): string {
  if (r.chance(0.5)) return r.pick(NASTY);
  const len = r.int(r.chance(0.9) ? 20 : max);
  let s = "";
  for (let i = 0; i < len; i++) s += String.fromCharCode(r.chance(0.8) ? 32 + r.int(95) : r.int(0x3000));
  return s;
}

/** Any JSON value: the wrong type where the schema wants another. */
export function randomValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 2 ? 5 : 7)) {
    case 0:
      return r.pick([0, 1, 2, -1, 1.5, 1e9, -1e18, Number.MAX_SAFE_INTEGER, 100_001, 4097]);
    case 1:
      return randomString(r);
    case 2:
      return r.chance(0.5);
    case 3:
      return null;
    case 4:
      return r.int(64);
    case 5:
      return Array.from({ length: r.int(6) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(6) }, () => [r.chance(0.5) ? randomString(r) : `K${r.int(9)}`, randomValue(r, depth + 1)]));
  }
}

/** `[[[…]]]` or `{"a":{"a":…}}`, `depth` deep, as JSON text (JSON.stringify would recurse). */
export function deepJson(depth: number, object: boolean): string {
  return object ? '{"a":'.repeat(depth) + "1" + "}".repeat(depth) : "[".repeat(depth) + "]".repeat(depth);
}

/** The strings of NASTY a field without control bytes takes: hostile in content, valid in form. */
export const PRINTABLE = NASTY.filter((x) => x !== "" && !/[\x00-\x1f\x7f]/.test(x) && !/[\ud800-\udfff]/.test(x.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")));

/** A hint: a value for one field; with `tame`, one the field's schema accepts (its content still hostile). */
export type Hint = (r: Rng, tame: boolean) => unknown;

export interface GenOptions {
  /** By field path ("cwd", "argv[]", "env{}" for a record's values, "env{key}" for its keys): what the schema cannot describe. */
  hints?: Record<string, Hint>;
  /** Values the schema accepts (bounds, lengths, types): hostile in content only. */
  tame?: boolean;
  /** Arrays and records longer than this are not built (a cap above it is fuzzed at this length). */
  maxArray?: number;
  /** Characters left for strings at their length limit, over the whole value (default 3 MiB: a body just over the API's 2 MiB). */
  budget?: { left: number };
}

/** A value the schema `s` accepts, with hostile content: bounds, strings at their limit, unicode, traversal. */
function tameValue(r: Rng, s: JsonSchema, opts: GenOptions, path: string, depth: number): unknown {
  if (s.anyOf) return generate(r, r.pick(s.anyOf), opts, path, depth);
  if (s.const !== undefined) return s.const;
  if (s.enum) return r.pick(s.enum);
  const type = Array.isArray(s.type) ? r.pick(s.type) : s.type;
  switch (type) {
    case "integer":
    case "number": {
      const step = type === "integer" ? 1 : 1e-9;
      const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + step : 0);
      const hi = s.maximum ?? lo + 1e6;
      const v = r.pick([lo, hi, lo + r.next() * (hi - lo)]);
      return type === "integer" ? Math.floor(v) : v;
    }
    case "string": {
      if (s.format === "date-time") return r.pick(["2030-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2030-01-01T00:00:00.999999999999Z", "2030-01-01T00:00:00+23:59"]);
      const min = s.minLength ?? 0;
      const max = s.maxLength ?? 5000;
      const budget = opts.budget!;
      if (r.chance(0.1) && max <= budget.left) {
        budget.left -= max;
        return r.pick(["x", "é", "/"]).repeat(max);
      }
      const fits = PRINTABLE.filter((x) => x.length >= min && x.length <= max);
      return fits.length ? r.pick(fits) : "x".repeat(Math.max(min, 1));
    }
    case "boolean":
      return r.chance(0.5);
    case "array": {
      const min = s.minItems ?? 0;
      const cap = s.maxItems ?? 8;
      const n = r.chance(0.02) && cap <= (opts.maxArray ?? 4097) ? cap : Math.min(cap, min + r.int(4));
      return Array.from({ length: n }, () => generate(r, s.items ?? {}, opts, `${path}[]`, depth + 1));
    }
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(s.properties ?? {}))
        if (s.required?.includes(key) || r.chance(0.3)) out[key] = generate(r, sub, opts, path ? `${path}.${key}` : key, depth + 1);
      const record = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined;
      const keyHint = opts.hints?.[`${path}{key}`];
      if (record) for (let i = r.int(5); i > 0; i--) out[keyHint ? String(keyHint(r, true)) : `K${i}`] = generate(r, record, opts, `${path}{}`, depth + 1);
      return out;
    }
    default:
      return null;
  }
}

function number(r: Rng, s: JsonSchema, integer: boolean): unknown {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum : undefined);
  const hi = s.maximum;
  const near = [lo, hi, lo === undefined ? undefined : lo - 1, hi === undefined ? undefined : hi + 1, s.exclusiveMinimum].filter((x): x is number => x !== undefined);
  const far = [0, -1, -0, 0.5, 1.5, -1e308, 1e308, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 5e-324, -Number.MAX_SAFE_INTEGER];
  const roll = r.next();
  if (roll < 0.35 && near.length) return r.pick(near) + (integer || r.chance(0.7) ? 0 : r.pick([1e-9, -1e-9, 0.5]));
  if (roll < 0.65) return r.pick(far);
  if (roll < 0.75) return r.pick(["1", "NaN", "Infinity", "1e309", "0x10", "", "-1"]);
  const a = lo ?? 0;
  const b = Math.min(hi ?? a + 100, a + 1e6);
  const v = a + r.next() * (b - a);
  return integer ? Math.floor(v) : v;
}

function string(r: Rng, s: JsonSchema, budget: { left: number }): unknown {
  if (s.format === "date-time" && r.chance(0.7)) return r.pick(DATES);
  const limit = s.maxLength;
  const roll = r.next();
  if (limit !== undefined && roll < 0.15 && limit + 1 <= budget.left) {
    // At the limit and one over, in bytes that count differently: ASCII, 4-byte emoji (2 UTF-16 units), NUL.
    const n = limit + r.pick([0, 1]);
    budget.left -= n;
    const unit = r.pick(["x", "é", "💥", "\u0000", "/"]);
    return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  }
  if (roll < 0.2 && (s.minLength ?? 0) > 0) return "x".repeat(s.minLength! - 1);
  if (roll < 0.25) return r.pick([123, null, true, ["x"], { x: 1 }]);
  return randomString(r, Math.min(limit ?? 5000, 5000));
}

/** A hostile value for `s` at `path` (see GenOptions.hints). */
export function generate(r: Rng, s: JsonSchema, opts: GenOptions = {}, path = "", depth = 0): unknown {
  opts.budget ??= { left: 3 << 20 };
  const hint = opts.hints?.[path];
  if (opts.tame) return hint ? hint(r, true) : tameValue(r, s, opts, path, depth);
  if (hint && r.chance(0.4)) return hint(r, false);
  if (depth > 0 && r.chance(0.04)) return randomValue(r, 2);
  if (s.anyOf) return generate(r, r.pick(s.anyOf), opts, path, depth);
  if (s.const !== undefined) return r.chance(0.8) ? s.const : randomString(r);
  if (s.enum) return r.chance(0.8) ? r.pick(s.enum) : randomString(r);
  const type = Array.isArray(s.type) ? r.pick(s.type) : s.type;
  const maxArray = opts.maxArray ?? 4097;
  switch (type) {
    case "integer":
    case "number":
      return number(r, s, type === "integer");
    case "string":
      return string(r, s, opts.budget);
    case "boolean":
      return r.chance(0.9) ? r.chance(0.5) : r.pick(["true", 1, 0, null]);
    case "array": {
      const cap = s.maxItems;
      const roll = r.next();
      const n =
        roll < 0.03 && cap !== undefined ? Math.min(cap + r.pick([0, 1]), maxArray) : roll < 0.06 && (s.minItems ?? 0) > 0 ? s.minItems! - 1 : roll < 0.1 ? r.int(64) : r.int(4);
      const items = Array.from({ length: n }, () => generate(r, s.items ?? {}, opts, `${path}[]`, depth + 1));
      // Duplicates: the same element again.
      if (items.length > 0 && r.chance(0.1)) items.push(items[0]);
      return items;
    }
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(s.properties ?? {})) {
        const required = s.required?.includes(key);
        if (required ? r.chance(0.97) : r.chance(0.25)) out[key] = generate(r, sub, opts, path ? `${path}.${key}` : key, depth + 1);
      }
      const record = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined;
      if (record) {
        const roll = r.next();
        const n = roll < 0.02 ? maxArray : roll < 0.1 ? r.int(64) : r.int(5);
        for (let i = 0; i < n; i++) {
          const keyHint = opts.hints?.[`${path}{key}`];
          const key = keyHint && r.chance(0.7) ? String(keyHint(r, false)) : n > 64 ? `K${i}` : String(generate(r, s.propertyNames ?? { type: "string" }, opts, `${path}{}key`, depth + 1));
          out[key] = generate(r, record, opts, `${path}{}`, depth + 1);
        }
      }
      if (r.chance(0.05)) out[r.pick(["bogus", "constructor", "toString", "hasOwnProperty", randomString(r)])] = randomValue(r, 1);
      return out;
    }
    default:
      return randomValue(r, depth);
  }
}

/**
 * `value` as JSON text, sometimes with what JSON.stringify never writes: a duplicate key (the
 * later wins in JSON.parse), a `__proto__` key, a deeply nested member, or a body that is not JSON.
 */
export function hostileJson(r: Rng, value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  const isObject = text.startsWith("{") && text.length > 2;
  const roll = r.next();
  if (roll < 0.05) return randomString(r);
  if (roll < 0.08) return text.slice(0, r.int(text.length));
  if (!isObject) return text;
  // Never a second argv or script: what a job runs stays what the caller bounded.
  const key = r.pick(Object.keys(value as object).filter((k) => k !== "argv" && k !== "script").concat("hold"));
  if (roll < 0.14) return `{${JSON.stringify(key)}:${JSON.stringify(randomValue(r, 1))},${text.slice(1)}`;
  if (roll < 0.18) return `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(randomValue(r, 1))}}`;
  if (roll < 0.21) return `${text.slice(0, -1)},"__proto__":{"hold":false,"admin":true,"argv":["sh"]}}`;
  if (roll < 0.23) return `${text.slice(0, -1)},"deep":${deepJson(r.pick([64, 5000, 200_000]), r.chance(0.5))}}`;
  return text;
}
