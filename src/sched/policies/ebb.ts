/**
 * ebb's default policy: size jobs by what their nodes are worth now. EASY (FCFS, a reservation for
 * the first job that cannot start, backfilling that never delays it) decides every start; running
 * malleable jobs are resized only when the numbers say it pays:
 * - admit: the first waiting job could start now if running jobs gave up nodes. They shrink, by
 *   exactly the nodes it lacks, taken where they cost least, and only if the time it would start
 *   earlier (its reservation − when the shrinks commit) exceeds the time the shrunk jobs are
 *   predicted to lose (their remaining work at the smaller size + the adaptation);
 * - lend: idle nodes nothing can use go to running jobs, a node at a time where it saves most, and
 *   a job grows only if the time it saves pays for this adaptation and the one that may take the
 *   nodes back. With a job waiting, only nodes its reservation leaves over are lent, or nodes lent
 *   to a job predicted to end before the reservation;
 * - moldable start: the first waiting job starts now below the size it asked for only if it is
 *   then predicted to end sooner than by waiting for its reservation: by its declared model, else
 *   (a malleable job, which may grow later) by the safe bound that its time grows at most linearly
 *   as its nodes drop.
 * A job whose speed is unknown (no samples, no profile, no model: `speedOf`) is never resized.
 * Nothing shrinks while nobody waits. Every resize carries its numbers in its reason.
 */
import { runtime } from "../../model/amdahl.ts";
import { Heap } from "../../util/heap.ts";
import { preferredSize } from "../batch.ts";
import type { CountStart, JobState, Note, PassInput, PassPlan, PendingJob, Reservation, Resize } from "../types.ts";
import { adaptationCost, remainingAt, speedOf, type Speed } from "../worth.ts";
import { remainingTime } from "../elastic.ts";
import { batch, countStarts, firstWaiting, incomingNodes, movable, queue } from "./common.ts";

/** Predicted times are estimates: a lent job must be predicted to end this much before a reservation it would hold nodes past. */
const END_MARGIN = 1.1;
/** A shrink for the first waiting job must be predicted to commit this many times over before its reservation. */
const COMMIT_SAFETY = 2;

interface Cand {
  job: JobState;
  speed: Speed;
  /** Seconds its remaining work takes at its current size. */
  rem: number;
  /** Seconds an adaptation by d nodes costs it. */
  cost: (d: number) => number;
  /** Past its settle time: may grow. */
  settled: boolean;
  /** Nodes given (admit) or taken (lend) so far in this pass. */
  delta: number;
}

const sec = (x: number) => `${Math.round(x)} s`;

export function planEbb(input: PassInput): PassPlan {
  const q = queue(input);
  const b = batch(input, q, { rigid: true });
  const starts: CountStart[] = countStarts(b);
  const resizes: Resize[] = [];
  const notes: Note[] = [];
  const reservations: Reservation[] = b.reservation ? [b.reservation] : [];
  const head = firstWaiting(input, q, starts, 1)[0];
  let idle = b.free;
  const cands: Cand[] = [];
  for (const job of input.running) {
    // The settle time guards growing on fresh measurements; giving nodes back to a waiting job does not wait for it.
    if (job.adapting || !job.elastic || job.atResizePoint === false || job.minNodes >= job.maxNodes || (job.sizes && job.sizes.length > 0)) continue;
    const speed = speedOf(job, input.now, input.config);
    if (!speed) continue;
    cands.push({ job, speed, rem: remainingTime(job, input.now), cost: (d) => adaptationCost(job, input.config, d), delta: 0, settled: movable(job, input) });
  }

  const reservation = b.reservation && head && b.reservation.jobId === head.id ? b.reservation : undefined;
  if (head && reservation) {
    const moldable = moldableStart(input, head, idle, reservation);
    if (moldable) {
      starts.push(moldable);
      idle -= moldable.nodes;
      return { starts, resizes, reservations: [], notes };
    }
    // The first waiting jobs that would all start now, in queue order, if the nodes were there: the
    // head and as many followers as one round of shrinks can serve (each would otherwise wait at
    // least until the head's reservation, with no node free).
    const group = firstWaiting(input, q, starts, Math.max(1, input.config.admitDepth));
    const base = idle + incomingNodes(input);
    let surplus = 0;
    for (const c of cands) surplus += Math.max(0, c.job.nodes - c.job.minNodes);
    let k = 0;
    let want = 0;
    while (k < group.length && want + preferredSize(group[k]!) - base <= surplus) want += preferredSize(group[k++]!);
    // As many as one round serves, else the head alone.
    for (const kk of k > 1 ? [k, 1] : [k]) {
      k = kk;
      const need = group.slice(0, k).reduce((n, j) => n + preferredSize(j), 0) - base;
      if (need <= 0) break;
      const admit = planAdmit(input, group.slice(0, k), need, reservation, cands);
      if (k === 1) notes.push(...admit.notes);
      if (admit.resizes.length > 0) {
        resizes.push(...admit.resizes);
        reservations.splice(0, reservations.length, { ...reservation, start: admit.at, fromJobs: admit.resizes.map((r) => r.jobId), reason: `ebb: ${admit.resizes.length} running job(s) give ${need} node(s) for ${k} waiting job(s), predicted gain ${sec(admit.gain)} > stretch ${sec(admit.stretch)}` });
        return { starts, resizes, reservations, notes };
      }
    }
  }
  // Lend what nothing can use.
  if (idle > 0) {
    const shrinking = new Set(resizes.map((r) => r.jobId));
    const free = reservation ? { any: Math.min(idle, Math.max(0, b.extra)), beforeOnly: idle - Math.min(idle, Math.max(0, b.extra)), until: reservation.start } : { any: idle, beforeOnly: 0, until: Number.POSITIVE_INFINITY };
    resizes.push(...planLend(input, cands.filter((c) => c.settled && !shrinking.has(c.job.id) && c.job.nodes < c.job.maxNodes), free));
  }
  return { starts, resizes, reservations, notes };
}

/**
 * The head starts now on the nodes free, below the size it asked for, if it is then predicted to
 * end sooner than by waiting for its reservation. Its speed: its declared model, else (a malleable
 * job, which may grow later) the bound that time grows at most linearly as nodes drop.
 */
function moldableStart(input: PassInput, head: PendingJob, idle: number, res: Reservation): CountStart | undefined {
  const want = preferredSize(head);
  const k = Math.min(idle, want);
  if (!head.elastic || k < head.minNodes || k >= want || k <= 0) return undefined;
  const ratio = head.model ? runtime(head.model, k) / runtime(head.model, want) : want / k;
  if (!(ratio > 0) || !Number.isFinite(ratio)) return undefined;
  const endNow = input.now + head.timeLimit * Math.max(1, ratio) * 1000;
  const endWaiting = res.start + head.timeLimit * 1000;
  if (endNow >= endWaiting) return undefined;
  return { jobId: head.id, nodes: k, reason: `moldable: ${k} of ${want} nodes now, predicted (${head.model ? "its model" : "at most linear slowdown"}) to end ${sec((endWaiting - endNow) / 1000)} sooner than at ${want} from its reservation` };
}

interface Admit {
  resizes: Resize[];
  notes: Note[];
  gain: number;
  stretch: number;
  at: number;
}

/**
 * Take `need` nodes from the running jobs where each node costs least (their predicted stretch),
 * and keep the plan only if the head's predicted gain exceeds the stretch of every shrunk job.
 */
function planAdmit(input: PassInput, group: readonly PendingJob[], need: number, res: Reservation, cands: Cand[]): Admit {
  const head = group[0]!;
  const none: Admit = { resizes: [], notes: [], gain: 0, stretch: 0, at: res.start };
  const pool = cands.filter((c) => c.job.nodes > c.job.minNodes);
  let surplus = 0;
  for (const c of pool) surplus += c.job.nodes - c.job.minNodes;
  if (surplus < need) return none;
  // The stretch of taking one more node from a job: its remaining work at one node fewer, plus its
  // adaptation when it is the first node taken.
  const stretchAt = (c: Cand, give: number) => (give === 0 ? 0 : c.rem * (c.speed.ratio(c.job.nodes - give) - 1) + c.cost(give));
  const keys = new Map<Cand, number>();
  const rekey = (c: Cand) => keys.set(c, stretchAt(c, c.delta + 1) - stretchAt(c, c.delta));
  const heap = new Heap<Cand>((x, y) => keys.get(x)! < keys.get(y)! || (keys.get(x) === keys.get(y) && x.job.id < y.job.id));
  for (const c of pool) {
    c.delta = 0;
    rekey(c);
    heap.push(c);
  }
  let left = need;
  while (left > 0 && heap.size > 0) {
    const c = heap.pop()!;
    c.delta++;
    left--;
    if (c.job.nodes - c.delta > c.job.minNodes) {
      rekey(c);
      heap.push(c);
    }
  }
  const chosen = pool.filter((c) => c.delta > 0);
  const given = new Map(chosen.map((c) => [c.job.id, c.delta]));
  let stretch = 0;
  let commit = 0;
  for (const c of chosen) {
    stretch += stretchAt(c, given.get(c.job.id)!);
    commit = Math.max(commit, c.cost(given.get(c.job.id)!));
  }
  const at = input.now + commit * 1000;
  const gain = (group.length * (res.start - at)) / 1000;
  // The head's reservation holds only if the shrinks commit before it: the cost is an estimate,
  // so it must fit COMMIT_SAFETY times over.
  if (input.now + COMMIT_SAFETY * commit * 1000 > res.start) return { ...none, notes: [{ jobId: head.id, text: `not admitted by shrinking: its reservation in ${sec((res.start - input.now) / 1000)} is too close for an adaptation of about ${sec(commit)}` }] };
  for (const c of pool) c.delta = 0;
  if (!(gain > stretch)) {
    return { ...none, notes: [{ jobId: head.id, text: `not admitted by shrinking: ${need} node(s) from ${chosen.length} job(s) would start it ${sec(Math.max(0, gain))} before its reservation, the shrunk jobs would lose ${sec(stretch)}` }] };
  }
  const resizes: Resize[] = [];
  for (const c of chosen) {
    const give = given.get(c.job.id)!;
    const lose = c.rem * (c.speed.ratio(c.job.nodes - give) - 1);
    resizes.push({
      jobId: c.job.id,
      from: c.job.nodes,
      to: c.job.nodes - give,
      rule: "admit",
      reason: `job ${head.id}${group.length > 1 ? ` (and ${group.length - 1} behind it)` : ""} waits until its reservation in ${sec((res.start - input.now) / 1000)}: give ${give} node(s) so it starts in about ${sec(commit)}; predicted gain ${sec(gain)} > stretch ${sec(stretch)} of all shrunk jobs (this one: +${sec(lose)} work, ${sec(c.cost(give))} adaptation; ${c.speed.source})`,
    });
  }
  return { resizes, notes: [], gain, stretch, at };
}

/**
 * Idle nodes to running jobs, one node at a time to the job whose remaining time drops most by it;
 * a job keeps its grant only if the time saved pays for growing and for giving the nodes back.
 */
function planLend(input: PassInput, cands: Cand[], free: { any: number; beforeOnly: number; until: number }): Resize[] {
  let pool = cands;
  for (let round = 0; round < 3 && pool.length > 0; round++) {
    const grant = greedyLend(input, pool, free);
    const pays = (c: Cand) => {
      const m = c.job.nodes + (grant.get(c.job.id) ?? 0);
      const saved = c.rem - remainingAt(c.job, input.now, c.speed, m);
      return saved > 2 * c.cost(m - c.job.nodes);
    };
    const failing = pool.filter((c) => (grant.get(c.job.id) ?? 0) > 0 && !pays(c));
    if (failing.length > 0) {
      const drop = new Set(failing.map((c) => c.job.id));
      pool = pool.filter((c) => !drop.has(c.job.id));
      continue;
    }
    const out: Resize[] = [];
    for (const c of pool) {
      const g = grant.get(c.job.id) ?? 0;
      if (g <= 0) continue;
      const m = c.job.nodes + g;
      const after = remainingAt(c.job, input.now, c.speed, m);
      out.push({
        jobId: c.job.id,
        from: c.job.nodes,
        to: m,
        rule: "grow",
        reason: `${g} idle node(s) nothing else can use: remaining ${sec(c.rem)} -> ${sec(after)} at ${m} nodes, predicted gain ${sec(c.rem - after)} > 2 adaptations of ${sec(c.cost(g))} (grow, and give back)${Number.isFinite(free.until) ? `; a reservation at +${sec((free.until - input.now) / 1000)} is kept` : ""}; ${c.speed.source}`,
      });
    }
    return out;
  }
  return [];
}

function greedyLend(input: PassInput, pool: readonly Cand[], free: { any: number; beforeOnly: number; until: number }): Map<number, number> {
  const grant = new Map<number, number>();
  const size = (c: Cand) => c.job.nodes + (grant.get(c.job.id) ?? 0);
  const gainOf = (c: Cand) => {
    const m = size(c);
    return remainingAt(c.job, input.now, c.speed, m) - remainingAt(c.job, input.now, c.speed, m + 1);
  };
  const key = new Map<number, number>();
  for (const c of pool) key.set(c.job.id, gainOf(c));
  const heap = new Heap<Cand>((x, y) => key.get(x.job.id)! > key.get(y.job.id)! || (key.get(x.job.id) === key.get(y.job.id) && x.job.id < y.job.id));
  for (const c of pool) heap.push(c);
  let any = free.any;
  let before = free.beforeOnly;
  while ((any > 0 || before > 0) && heap.size > 0) {
    const c = heap.pop()!;
    if (!(key.get(c.job.id)! > 0)) break;
    const m = size(c) + 1;
    // Nodes the reservation counts on go only to a job predicted to end (and give them back) before it.
    const endsBefore = input.now + (remainingAt(c.job, input.now, c.speed, m) * END_MARGIN + c.cost(m - c.job.nodes)) * 1000 <= free.until;
    if (before > 0 && endsBefore) before--;
    else if (any > 0) any--;
    else continue;
    grant.set(c.job.id, (grant.get(c.job.id) ?? 0) + 1);
    if (m < c.job.maxNodes) {
      key.set(c.job.id, gainOf(c));
      heap.push(c);
    }
  }
  return grant;
}
