/**
 * Reduction operators: sum, min, max, prod on numbers, arrays of numbers and typed arrays
 * (element-wise, same dtype and length). Integer typed arrays wrap like C (the store truncates;
 * 32-bit products use Math.imul so they are exact modulo 2^32); Uint8ClampedArray saturates.
 * The operators are commutative and associative; collectives still combine in a fixed order
 * (lower ranks first) so every rank gets bit-identical floating-point results.
 */
import { type TypedArray, isTypedArray } from "./codec.ts";
import { CommUsageError } from "./errors.ts";

export type Op = "sum" | "min" | "max" | "prod";
export const OPS: readonly Op[] = ["sum", "min", "max", "prod"];

export type Reducible = number | number[] | TypedArray;

type Nums = { [i: number]: number; readonly length: number };
type Bigs = { [i: number]: bigint; readonly length: number };

export function checkOp(op: unknown): asserts op is Op {
  if (!OPS.includes(op as Op)) throw new CommUsageError(`unknown reduction op ${JSON.stringify(op)} (use ${OPS.join(", ")})`);
}

export function checkReducible(x: unknown): asserts x is Reducible {
  if (typeof x === "number" || isTypedArray(x)) return;
  if (Array.isArray(x) && x.every((v) => typeof v === "number")) return;
  throw new CommUsageError("reductions take a number, an array of numbers or a typed array");
}

function numLoop(out: Nums, a: Nums, b: Nums, op: Op, imul: boolean): void {
  const n = out.length;
  switch (op) {
    case "sum":
      for (let i = 0; i < n; i++) out[i] = a[i]! + b[i]!;
      break;
    case "prod":
      if (imul) for (let i = 0; i < n; i++) out[i] = Math.imul(a[i]!, b[i]!);
      else for (let i = 0; i < n; i++) out[i] = a[i]! * b[i]!;
      break;
    case "min":
      for (let i = 0; i < n; i++) out[i] = Math.min(a[i]!, b[i]!);
      break;
    case "max":
      for (let i = 0; i < n; i++) out[i] = Math.max(a[i]!, b[i]!);
      break;
  }
}

function bigLoop(out: Bigs, a: Bigs, b: Bigs, op: Op): void {
  const n = out.length;
  switch (op) {
    case "sum":
      for (let i = 0; i < n; i++) out[i] = a[i]! + b[i]!;
      break;
    case "prod":
      for (let i = 0; i < n; i++) out[i] = a[i]! * b[i]!;
      break;
    case "min":
      for (let i = 0; i < n; i++) out[i] = a[i]! < b[i]! ? a[i]! : b[i]!;
      break;
    case "max":
      for (let i = 0; i < n; i++) out[i] = a[i]! > b[i]! ? a[i]! : b[i]!;
      break;
  }
}

function scalar(a: number, b: number, op: Op): number {
  switch (op) {
    case "sum":
      return a + b;
    case "prod":
      return a * b;
    case "min":
      return Math.min(a, b);
    case "max":
      return Math.max(a, b);
  }
}

function mismatch(a: Reducible, b: Reducible): never {
  const d = (x: Reducible) =>
    typeof x === "number" ? "a number" : Array.isArray(x) ? `number[${x.length}]` : `${x.constructor.name}(${x.length})`;
  throw new CommUsageError(`cannot reduce ${d(a)} with ${d(b)}: ranks must contribute the same type and length`);
}

/**
 * `lo op hi` element-wise, `lo` being the lower-ranked contribution. Writes into `into` when
 * given (a buffer the caller owns, same type and length; it may be `lo` or `hi`), else allocates.
 */
export function combine<T extends Reducible>(lo: T, hi: T, op: Op, into?: T): T {
  if (typeof lo === "number") {
    if (typeof hi !== "number") mismatch(lo, hi);
    return scalar(lo, hi as number, op) as T;
  }
  if (Array.isArray(lo)) {
    if (!Array.isArray(hi) || hi.length !== lo.length) mismatch(lo, hi);
    const out = (into as number[] | undefined) ?? new Array<number>(lo.length);
    numLoop(out, lo, hi as number[], op, false);
    return out as T;
  }
  const a = lo as TypedArray;
  const b = hi as TypedArray;
  if (!isTypedArray(b) || b.constructor !== a.constructor || b.length !== a.length) mismatch(a, b);
  const out = (into as TypedArray | undefined) ?? new (a.constructor as new (n: number) => TypedArray)(a.length);
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) bigLoop(out as Bigs, a, b as Bigs, op);
  else numLoop(out as Nums, a as Nums, b as Nums, op, a instanceof Int32Array || a instanceof Uint32Array);
  return out as T;
}

/** Reduces a list of contributions in order (used by tests and by single-rank shortcuts). */
export function reduceAll<T extends Reducible>(values: readonly T[], op: Op): T {
  if (values.length === 0) throw new CommUsageError("nothing to reduce");
  let acc = values[0]!;
  for (let i = 1; i < values.length; i++) acc = combine(acc, values[i]!, op);
  return acc;
}
