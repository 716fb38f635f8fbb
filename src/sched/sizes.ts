/**
 * Valid sizes: a job may declare the node counts it can run at (Cannon's square process grids:
 * 1, 4, 9, 16). Every policy plans as if any size in [minNodes, maxNodes] were fine; this one
 * place rounds its choices to the job's sizes, so no policy needs a check of its own:
 * - the job's range becomes [smallest valid size, largest valid size] before the pass;
 * - a start or a grow rounds down to the nearest valid size (it never takes more nodes than the
 *   policy gave it), and a grow that rounds to the current size is dropped;
 * - a shrink rounds down too (it frees at least what the policy wanted freed), or up to the
 *   smallest valid size; a shrink that rounds to the current size is dropped.
 * Pure.
 */
import type { JobState, PassInput, PassPlan, PendingJob } from "./types.ts";

/** What a job may declare: a list of node counts, or every square in its range. */
export type SizesSpec = "square" | readonly number[];

/** The largest valid size at or below n (n itself when the job declares none). */
export function sizeAtMost(sizes: readonly number[] | undefined, n: number): number | undefined {
  if (!sizes || sizes.length === 0) return n;
  let best: number | undefined;
  for (const s of sizes) if (s <= n && (best === undefined || s > best)) best = s;
  return best;
}

/** The smallest valid size at or above n (n itself when the job declares none). */
export function sizeAtLeast(sizes: readonly number[] | undefined, n: number): number | undefined {
  if (!sizes || sizes.length === 0) return n;
  let best: number | undefined;
  for (const s of sizes) if (s >= n && (best === undefined || s < best)) best = s;
  return best;
}

export function isValidSize(sizes: readonly number[] | undefined, n: number): boolean {
  return !sizes || sizes.length === 0 || sizes.includes(n);
}

/**
 * A spec resolved against a job's range: sorted, distinct, every one in [min, max]. Errors say
 * why in words (the caller names the field).
 */
export function resolveSizes(spec: SizesSpec, min: number, max: number): number[] | { error: string } {
  if (spec === "square") {
    const out: number[] = [];
    for (let q = Math.ceil(Math.sqrt(min)); q * q <= max; q++) if (q * q >= min) out.push(q * q);
    if (out.length === 0) return { error: `no square lies in the job's range ${min}-${max}` };
    return out;
  }
  if (spec.length === 0) return { error: "give at least one size" };
  const bad = spec.find((s) => !Number.isInteger(s) || s < min || s > max);
  if (bad !== undefined) return { error: `size ${bad} is outside the job's range ${min}-${max}` };
  return [...new Set(spec)].sort((a, b) => a - b);
}

/** `--sizes 1,4,9,16` or `--sizes square` as the API takes it; undefined when it is neither. */
export function parseSizesSpec(text: string): "square" | number[] | undefined {
  const t = text.trim();
  if (t === "square") return "square";
  if (!/^\d+(,\d+)*$/.test(t)) return undefined;
  return t.split(",").map(Number);
}

/** A job's range narrowed to its valid sizes (the same object when it declares none). */
export function withinSizes<J extends { minNodes: number; maxNodes: number; sizes?: readonly number[]; preferredNodes?: number }>(job: J): J {
  const s = job.sizes;
  if (!s || s.length === 0) return job;
  const lo = sizeAtLeast(s, job.minNodes);
  const hi = sizeAtMost(s, job.maxNodes);
  if (lo === undefined || hi === undefined || lo > hi) return job;
  if (lo === job.minNodes && hi === job.maxNodes) return job;
  const out: J = { ...job, minNodes: lo, maxNodes: hi };
  if (job.preferredNodes !== undefined) out.preferredNodes = Math.max(lo, Math.min(hi, job.preferredNodes));
  return out;
}

/** The pass's input with every job's range narrowed to its valid sizes. */
export function sizedInput(input: PassInput): PassInput {
  if (!input.running.some(hasSizes) && !input.pending.some(hasSizes)) return input;
  return { ...input, running: input.running.map(withinSizes), pending: input.pending.map(withinSizes) };
}

/** A plan's starts and resizes rounded to the jobs' valid sizes (see the file comment). */
export function sizedPlan(input: PassInput, plan: PassPlan): PassPlan {
  const sizes = new Map<number, readonly number[]>();
  for (const j of [...input.running, ...input.pending]) if (hasSizes(j)) sizes.set(j.id, j.sizes!);
  if (sizes.size === 0) return plan;
  const notes = [...plan.notes];
  const starts = plan.starts.flatMap((s) => {
    const v = sizes.get(s.jobId);
    const to = sizeAtMost(v, s.nodes);
    if (to === s.nodes) return [s];
    if (to === undefined) {
      notes.push({ jobId: s.jobId, text: `not started on ${s.nodes} nodes: no valid size (${v!.join(",")}) fits` });
      return [];
    }
    return [{ ...s, nodes: to, reason: `${s.reason}; ${s.nodes} rounded down to ${to}, a valid size` }];
  });
  const resizes = plan.resizes.flatMap((r) => {
    const v = sizes.get(r.jobId);
    if (isValidSize(v, r.to)) return [r];
    const to = r.to > r.from ? sizeAtMost(v, r.to) : (sizeAtMost(v, r.to) ?? sizeAtLeast(v, r.to));
    if (to === undefined || to === r.from || (r.to > r.from && to < r.from) || (r.to < r.from && to > r.from)) {
      notes.push({ jobId: r.jobId, text: `${r.rule} ${r.from} -> ${r.to} not done: no valid size (${v!.join(",")}) between them` });
      return [];
    }
    return [{ ...r, to, reason: `${r.reason}; ${r.to} rounded to ${to}, a valid size` }];
  });
  return { ...plan, starts, resizes, notes };
}

/** A policy's plan function, made to honour valid sizes. */
export function honouringSizes<P extends PassPlan>(plan: (input: PassInput) => P): (input: PassInput) => P {
  return (input) => {
    const sized = sizedInput(input);
    const p = plan(sized);
    return sized === input ? p : ({ ...p, ...sizedPlan(sized, p) } as P);
  };
}

function hasSizes(j: JobState | PendingJob): boolean {
  return j.sizes !== undefined && j.sizes.length > 0;
}
