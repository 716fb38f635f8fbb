/**
 * ebb's start sizes, by the node price (sched/price.ts) like every other size it picks. A malleable
 * job starting now on k nodes costs its own run time T(k) and λ × the node-seconds k T(k) it holds
 * (the wait it imposes on the jobs behind it); its start size is the k in its range where
 *   F(k) = T(k) (1 + λ k)
 * is least — the price of a running job at cost-free sizes (no adaptation at a start):
 * - jobs wait (λ > 0): a job that wastes nodes at the size it asked for starts smaller, where its
 *   node-seconds are worth more to the queue than its own time (as drms-rs when saturated), never
 *   above what it asked for;
 * - nobody waits after this pass's starts (λ = 0) and the machine is light: the idle nodes beyond
 *   the arrival reserve go to the malleable jobs starting, up to their maximum, where their time
 *   drops most (as apm-equi when light): they start large at once instead of growing later through
 *   an adaptation; a node only if what it saves exceeds the adaptation that may give it back, and
 *   only for a job whose speed is known (a model or the prior), as ebb resizes no running job
 *   whose speed it does not know.
 * A waiting job has measured nothing, so its speed is its declared model, else a prior: the
 * efficiency at the size it asked for that the running malleable jobs measured at theirs (the
 * median, by their MTCT: `efficiencyPrior`), read through the same Amdahl reading as the running
 * jobs' (`timeRatio`), else the bound that time grows at most linearly as nodes drop (then the price
 * never starts a job below its size: its node-seconds are the same at every size). Pure.
 */
import { runtime } from "../../model/amdahl.ts";
import { timeRatio } from "../../model/scaling.ts";
import { spmdPhase } from "../../model/spmd.ts";
import { preferredSize } from "../batch.ts";
import type { ErsConfig } from "../config.ts";
import { limitRatio, rescaleLimit } from "../limits.ts";
import { sizeAtMost } from "../sizes.ts";
import type { JobState, PendingJob } from "../types.ts";

/**
 * The parallel efficiency at the size it asked for (T(1) / (size × T(size)) under `timeRatio`'s
 * reading: compute scales, the MPI time does not) of the running malleable jobs that measured
 * their MTCT (at least `minSamples` samples): the median, or undefined when none did.
 */
export function efficiencyPrior(running: readonly JobState[], now: number, config: Pick<ErsConfig, "minSamples" | "window">): number | undefined {
  const es: number[] = [];
  for (const j of running) {
    if (!j.elastic) continue;
    const m = j.mtct ?? spmdPhase(j.samples, now, config.window);
    if (!m || m.count < config.minSamples || !(m.average >= 0) || !Number.isFinite(m.average)) continue;
    const n = j.nodes;
    const asked = j.preferredNodes ?? j.profile?.[0]?.nodes ?? n;
    // At n nodes an iteration is n/p + k (k the MTCT) in units of its compute at n.
    es.push((n + m.average) / (n + Math.max(2, asked) * m.average));
  }
  if (es.length === 0) return undefined;
  if (sameValues(es, lastPrior.es)) return lastPrior.median;
  // A typed array sorts numbers without a comparator; a NaN (none is expected) keeps the comparator's order.
  const sorted = es.some(Number.isNaN) ? es.slice().sort((a, b) => a - b) : Float64Array.from(es).sort();
  const h = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[h]! : (sorted[h - 1]! + sorted[h]!) / 2;
  lastPrior = { es, median };
  return median;
}

/**
 * The last median worked out and the efficiencies it came from, in the running jobs' order: most
 * passes read the same jobs' same measurements (a pass's second pass at one instant, a tick that
 * moved no MTCT), and the median is then the same without a sort.
 */
let lastPrior: { es: readonly number[]; median: number } = { es: [], median: 0 };

function sameValues(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * T(k) / T(want) of a waiting job: its declared model, else Amdahl through the efficiency `prior`
 * at the size it asked for (on two nodes for a one-node job), else at most linearly slower.
 */
export function startRatio(job: PendingJob, prior: number | undefined): (k: number) => number {
  const want = preferredSize(job);
  const model = job.model;
  if (model && runtime(model, want) > 0) return (k) => runtime(model, k) / runtime(model, want);
  if (prior !== undefined && prior > 0 && prior < 1) {
    // Its MTCT at q nodes if its efficiency there is `prior`: E = (q + k) / (q (1 + k)).
    const q = Math.max(2, want);
    const mtct = (q * (1 - prior)) / (prior * q - 1);
    if (mtct > 0 && Number.isFinite(mtct)) return (k) => timeRatio(q, k, mtct) / timeRatio(q, want, mtct);
  }
  return (k) => want / k;
}

/**
 * The size in [lo, hi] where T(k) (1 + λ k) is least (the largest of equals), T by `ratio`. The
 * price is convex in k for every ratio here (a + b k + c/k, b, c >= 0, times 1 + λ k), so a walk
 * down from hi stops at the first rise.
 */
export function cheapestStart(ratio: (k: number) => number, lo: number, hi: number, lambda: number): number {
  const f = (k: number) => ratio(k) * (1 + lambda * k);
  let best = hi;
  let at = f(hi);
  // Whole steps when few sizes, else 64 even steps then whole ones around the best.
  const step = Math.max(1, Math.floor((hi - lo) / 64));
  for (let k = hi - step; k >= lo; k -= step) {
    const v = f(k);
    if (!(v < at)) break;
    best = k;
    at = v;
  }
  if (step > 1) {
    for (let k = Math.min(hi, best + step - 1); k >= Math.max(lo, best - step + 1); k--) {
      const v = f(k);
      if (v < at) [best, at] = [k, v];
    }
  }
  return best;
}

/** A waiting malleable job as the batch pass starts it at `k` nodes: that size only, its limit as a start there rescales it (sched/limits.ts, whole seconds up). */
export function sizedView(job: PendingJob, k: number): PendingJob {
  const want = preferredSize(job);
  if (k === want && job.minNodes === k && job.maxNodes === k) return job;
  const limit = k < want ? rescaleLimit({ startTime: 0, limit: job.timeLimit, original: job.timeLimit, at: 0, ratio: limitRatio({ nodes: want, model: job.model }, k).ratio, grow: false }) : job.timeLimit;
  return { ...job, minNodes: k, maxNodes: k, preferredNodes: k, timeLimit: limit };
}

/** The size a malleable job starts at while jobs wait (node price `lambda` > 0): `cheapestStart` in [min, asked], on a valid size. */
export function startSizeWhileWaiting(job: PendingJob, lambda: number, prior: number | undefined): number {
  const want = preferredSize(job);
  if (!job.elastic || job.moldable || !(lambda > 0) || job.minNodes >= want) return want;
  const known = startSizes.get(job);
  if (known && known.lambda === lambda && known.prior === prior && known.want === want && known.min === job.minNodes && known.model === job.model && known.sizes === job.sizes) return known.k;
  const k = sizeAtMost(job.sizes, cheapestStart(startRatio(job, prior), job.minNodes, want, lambda)) ?? want;
  startSizes.set(job, { lambda, prior, want, min: job.minNodes, model: job.model, sizes: job.sizes, k });
  return k;
}

/**
 * Each waiting job's last start size with everything it was worked out from: a pass prices every
 * malleable waiting job that fits, and about half of them at the same λ and prior as the pass before.
 */
const startSizes = new WeakMap<PendingJob, { lambda: number; prior: number | undefined; want: number; min: number; model: PendingJob["model"]; sizes: PendingJob["sizes"]; k: number }>();

/**
 * Nobody waits: `surplus` idle nodes to the malleable jobs starting now, a node at a time where the
 * job's time drops most, up to its maximum; a node only if it saves more than the adaptation that
 * may give it back (`giveBack`, s). Returns each job's extra nodes.
 */
export function growStarts(jobs: readonly { job: PendingJob; nodes: number }[], surplus: number, prior: number | undefined, giveBack: (job: PendingJob) => number): Map<number, number> {
  const add = new Map<number, number>();
  const cands = jobs
    // A speed known from nothing (no model, no prior) is never grown: as ebb never resizes such a running job.
    .filter((x) => x.job.elastic && !x.job.moldable && !(x.job.sizes && x.job.sizes.length > 0) && x.nodes === preferredSize(x.job) && x.nodes < x.job.maxNodes && (x.job.model !== undefined || prior !== undefined))
    .map((x) => ({ ...x, ratio: startRatio(x.job, prior), cost: giveBack(x.job), m: x.nodes }));
  const gainOf = (c: (typeof cands)[number]) => c.job.timeLimit * (c.ratio(c.m) - c.ratio(c.m + 1));
  let left = surplus;
  while (left > 0) {
    let best: (typeof cands)[number] | undefined;
    let bestGain = 0;
    for (const c of cands) {
      if (c.m >= c.job.maxNodes) continue;
      const g = gainOf(c);
      if (g > bestGain || (g === bestGain && best && c.job.id < best.job.id)) [best, bestGain] = [c, g];
    }
    if (!best) break;
    // What the node saves must pay for giving it back: its whole grant's saving against one adaptation.
    best.m++;
    left--;
    add.set(best.job.id, best.m - best.nodes);
  }
  for (const c of cands) {
    const g = add.get(c.job.id);
    if (g && !(c.job.timeLimit * (c.ratio(c.nodes) - c.ratio(c.m)) > c.cost)) add.delete(c.job.id);
  }
  return add;
}
