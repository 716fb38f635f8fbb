/**
 * ebb's default policy: size jobs by what their nodes are worth now. EASY (FCFS, a reservation for
 * the first job that cannot start, backfilling that never delays it) decides the starts at the
 * sizes asked for, the jobs behind the first waiting one tried shortest first (by requested time:
 * shortest-job backfilled first, which keeps the reservation and favours the jobs whose slowdown a
 * wait hurts most; with priorities, shortest first only between equal ones, so that backfilling
 * keeps the priority order); then, on what each job's nodes are worth:
 * - node price (sched/price.ts): while jobs wait, a node-second a running job does not use lets
 *   the queue drain sooner; it is worth λ = (jobs it reaches) / nodes seconds of summed
 *   turnaround, the jobs it reaches being those waiting and those expected to arrive before the
 *   backlog clears (`queueReach`). Nothing waits: λ = 0;
 * - start sizes (start-size.ts): while jobs wait, a malleable job starts where its time plus λ ×
 *   its node-seconds is least (λ of the jobs already waiting; its speed by its model, else the
 *   efficiency the running jobs measured at the sizes they asked for), and EASY runs again on those
 *   sizes, the first waiting job keeping its reservation at the size it asked for; with nobody
 *   waiting, the idle nodes beyond the arrival reserve go to this pass's malleable starts at once;
 * - room at the start: when the first waiting job is blocked and malleable jobs start in this pass,
 *   they start on fewer nodes (where a node costs least: their time at one node fewer, by their
 *   model or at most linearly slower) if that lets it start now too and its wait until its
 *   reservation exceeds what they lose (`startRoom`);
 * - loans back for a lone head: when the first waiting job is the only one, the queue was not real
 *   (reserve.ts `queueWasReal`) and the nodes lent beyond running jobs' first sizes cover what it
 *   lacks, they come back, the cheapest first (`reclaim`), if its size after one give-back ends it
 *   sooner than the best start on the nodes free now (`loansForHead`); it is reserved at the
 *   give-back. Before, such a head started below its size (on a light machine, half of it for
 *   twice the time) to avoid a reservation at a borrower's end. Issue 35, the NASA iPSC/860 trace
 *   (128 nodes, 47 % load, a real light machine; seeds 1-5): ebb's bounded slowdown 1.0108 ->
 *   1.0079, 1.0163 -> 1.0074 and 1.0591 -> 1.0187 at 25, 50 and 100 % malleable (EASY's 1.0119),
 *   turnaround no worse; hpc2n's nine points within -4.5 % .. +3.2 % of bounded slowdown and
 *   +-0.5 % of turnaround (net none), lublin x3 within 0.3 %. Measured and not kept: for any head
 *   (hpc2n x1, 50 %, seeds 1-2: bounded slowdown / drms-rs's 0.92 -> 1.11), for a lone head while
 *   the queue was real (hpc2n x0.5, 100 %: 1.36 -> 1.46);
 * - moldable start: a malleable waiting job (the head, then the ones behind it) starts now on the
 *   nodes free, below the size it asked for, if the queue's gain (λ × the node-seconds of its work
 *   done on nodes that would idle until its reservation) exceeds its own loss (its predicted end
 *   now, by its declared model or else the bound that time grows at most linearly as nodes drop,
 *   against its end from the reservation). Behind the head only if the reservation holds (on
 *   the nodes it leaves over if the job would run past it). The head's end from an admit instead
 *   (when the shrinks that would start it at its size pay: their commit, their stretch counted)
 *   was measured mixed on hpc2n, 5 seeds (bounded slowdown / drms-rs's 0.874 -> 0.871 at scale 1,
 *   100 %, 0.945 -> 1.013 at 0.7, 50 %; the light machine 1.0127 -> 1.0126 of EASY's): not kept;
 *   nor λ of the jobs waiting behind it alone, without the arrivals queueReach expects (as start
 *   sizes price it): hpc2n worse, 5 seeds (turnaround / drms-rs's at 0.5, 100 % 1.0028 -> 1.0150,
 *   at 0.7, 50 % 1.0010 -> 1.0087; the light machine's bounded slowdown 1.0127 -> 1.0122 of EASY's);
 * - admit: the first waiting jobs could start now if running jobs gave up nodes. They shrink, by
 *   exactly the nodes lacking, taken where they cost least, only if the time those jobs start
 *   earlier exceeds the time the shrunk jobs are predicted to lose (work at the smaller size + the
 *   adaptation) and the shrinks (and those under way) commit well before the reservation. The jobs
 *   behind them that no backfill can start before the head (their limits run past its reservation
 *   and they do not fit in the nodes it leaves over, `blockedBehind`) wait for its start too, and
 *   count in the time gained (issue 35, the queue's wait: hpc2n x0.5, 100 % malleable, seeds 1-10,
 *   --check 0: bsld 10.56 -> 9.9, mean wait -13 %, TA -0.1 %; a tail of short jobs with long limits
 *   behind a head that waited hours for its size). Measured there and not kept (seed 1, bsld 9.7
 *   before): a malleable head reserved below its size where its own end is soonest (at the instant
 *   its minimum or more comes free, still held to its reservation at its size): 13.8, the earlier
 *   reservation shuts short jobs with long limits out of backfilling; a job behind the head that
 *   runs past its reservation admitted by shrinks of jobs that run past it too (at the reservation
 *   the nodes are held as before): seeds 1-3 11.7 against 10.4 (not conclusive: a first version
 *   of the rule kept read 11.7 on seeds 1-3 too, and 10.55 over seeds 1-10). Else a
 *   job behind it that would backfill but for the nodes is admitted the same way (at its size, else
 *   a malleable one at its minimum, its loss there priced in), its wait running until enough jobs
 *   end, from shrinks the reservation survives (backfill-admit.ts). With
 *   priorities (fair share), each job's seconds weigh its priority against the head's
 *   (`priorityWeight`): a heavy user's running job gives nodes to a light user's waiting one.
 *   Measured and not kept (issue 35, hpc2n x0.5, 100 % malleable, seeds 1-5, --check 0 each; ebb's
 *   mean bsld 11.31, TA 17,317 s, drms-rs's 7.96 and 17,268): where a head of 64-72 nodes asked
 *   (900-1,800 s limits) cannot be admitted at its size (the running jobs hold fewer nodes above
 *   their minimum than it lacks), the head alone admitted below its size, its own loss there priced
 *   in by moving its reservation earlier by it (as `atMinimum`) and its promise kept at EASY's
 *   reservation: at its priced start size bsld 11.70 (per seed -0.5 to +2.1), at its minimum 11.80,
 *   TA +0.8 %; its size and the shrinks chosen together (the k below its size where T(k) (1 + λ k)
 *   plus the donors' stretch for k − idle nodes is least, if below its wait plus T(want) (1 + λ want)):
 *   bsld 11.56, TA 17,427 s and 114 late starts, as the size priced moves from pass to pass (other
 *   shrinks bring its whole size within seconds, and it waits for that past the smaller size's
 *   promise). The gap there is a tail: per seed the top 3 of ~3,145 jobs carry 52-140 % of it (top 10: 94-225 %), short
 *   jobs (2-22 s run, 1,200-86,400 s limits, so no backfill) waiting 2.7-8.5 h behind a malleable head
 *   of 12-128 nodes asked that waits hours for its size while the running jobs hold 17-88 nodes
 *   above their minimums (bench/_bsld-tail.ts); the donors' stretch, priced by their limits,
 *   matched the head's gain (91,724 s against 89,328 s for a head of [32, 128]);
 *   the donors' stretch weighed in bounded slowdown (the head's limit over the donor's
 *   whole run, so a long job gives to a short one): bsld 11.10, but TA 17,448 s (/ drms-rs's
 *   1.0028 -> 1.0104). drms-rs's lead there and at lublin x3 50 % rests on breaking EASY's promise
 *   (1,949 of 2,439 and 1,439 of 2,014 first-in-line jobs late, seeds 2 and 4); at lublin x3 ebb's
 *   whole bsld gap is jobs waiting behind rigid jobs of >= 200 nodes, whom drms-rs makes wait
 *   99,549 s on average against ebb's 22,651 (bench/_bsld-gap.ts);
 * - shrink by price: a running job shrinks to the size where its remaining time plus λ × its
 *   node-seconds is least, if that gains more than the adaptation (an inefficient job under a long
 *   queue gives nodes back; an efficient one keeps them; with priorities its own time weighs its
 *   priority against the first waiting job's, so a heavy user's job gives sooner), never past a reservation that counts on
 *   its end unless the reservation's extra nodes cover what it keeps; the shrinks that gain most
 *   per node first, and together no more nodes than the waiting jobs lack (their sizes less the
 *   nodes idle and those shrinks under way hand back);
 * - lend: idle nodes nothing can use go to running jobs, a node at a time where its price drops
 *   most, a job keeping its grant only if the gain (its own time, less λ × the extra node-seconds)
 *   pays for this adaptation and the one that may give the nodes back. With a job waiting, the
 *   nodes its reservation leaves over stay idle for backfilling (a loan does not come back for a
 *   backfill), and those it counts on go only to a job predicted to end before it;
 *   with nobody waiting, the arrival reserve stays idle, and loans (nodes beyond a job's first
 *   size) come back when the idle nodes fall below it (reserve.ts).
 * A job whose speed is unknown (no samples, no profile, no model: `speedOf`) is never resized but
 * to give a loan back. While nobody waits nothing shrinks but loans. Every decision carries its
 * numbers in its reason.
 */
import { runtime } from "../../model/amdahl.ts";
import { Heap } from "../../util/heap.ts";
import { preferredSize, shortestFirstOrder, type BatchCountsPlan } from "../batch.ts";
import type { ErsConfig } from "../config.ts";
import type { CountStart, JobState, Note, PassInput, PassPlan, PendingJob, Reservation, Resize } from "../types.ts";
import { adaptationCost, remainingAt, speedOf, type Speed } from "../worth.ts";
import { bestShrink, type Shrink, moldableWorth, nodePrice, price, queueReach, remAt, type Priced } from "../price.ts";
import { efficiencyPrior, growStarts, sizedView, startRatio, startSizeWhileWaiting } from "./start-size.ts";
import { remainingTime } from "../elastic.ts";
import { batch, countStarts, firstWaiting, idsOf, incomingNodes, movable, queue, sortedEndings } from "./common.ts";
import { atMinimum, backfillWants, donorFloor, type BackfillWant } from "./backfill-admit.ts";
import { GiveOrder } from "./give-order.ts";
import { arrivalReserve, loanOf, queueWasReal, reclaim } from "./reserve.ts";
import type { QuietState } from "./index.ts";

/** Predicted times are estimates: a lent job must be predicted to end this much before a reservation it would hold nodes past. */
const END_MARGIN = 1.1;
/** A shrink for the first waiting job must be predicted to commit this many times over before its reservation. */
const COMMIT_SAFETY = 2;
/** The least a running job's seconds weigh against the first waiting job's in a priced shrink (priorityWeight). */
const MIN_WEIGHT = 1e-3;

/** A running job ebb may resize, as the price reads it (sched/price.ts): one object a job a pass, no closure. */
class Cand implements Priced {
  /** Its key in the lend's heap (the next node's gain). */
  key = 0;
  /** Nodes it holds. */
  readonly n: number;
  readonly slowerWhenSmaller: boolean | undefined;
  constructor(
    readonly job: JobState,
    readonly speed: Speed,
    /** Seconds its remaining work takes at its current size. */
    readonly rem: number,
    private readonly config: ErsConfig,
  ) {
    this.n = job.nodes;
    this.slowerWhenSmaller = speed.slowerWhenSmaller;
  }

  ratio(m: number): number {
    return this.speed.ratio(m);
  }

  /** Seconds an adaptation by d nodes costs it. */
  cost(d: number): number {
    return adaptationCost(this.job, this.config, d);
  }

  // Lend: the last two sizes priced and its remaining time at each (a grant prices m and m + 1, then m + 1 and m + 2).
  private m1 = -1;
  private r1 = 0;
  private m2 = -1;
  private r2 = 0;

  /** Seconds its remaining work takes at m nodes (`remainingAt`), at this pass's `now`. */
  remainingAt(m: number, now: number): number {
    if (m === this.m1) return this.r1;
    if (m === this.m2) return this.r2;
    const r = remainingAt(this.job, now, this.speed, m);
    this.m2 = this.m1;
    this.r2 = this.r1;
    this.m1 = m;
    this.r1 = r;
    return r;
  }
}

const sec = (x: number) => `${Math.round(x)} s`;

export function planEbb(input: PassInput): PassPlan {
  const q0 = queue(input);
  let { q, b } = easyPass(input, q0);
  let starts: CountStart[] = countStarts(b);
  let queued = queueFigures(input, q, starts);
  // Start sizes by the node price (start-size.ts): while jobs wait, malleable jobs start where
  // their time plus λ × their node-seconds is least, and EASY runs again on those sizes.
  let prior: number | undefined;
  let priorRead = false;
  const priorOf = () => (priorRead ? prior : ((priorRead = true), (prior = efficiencyPrior(input.running, input.now, input.config))));
  if (!input.vectors && queued.waiting > 0 && input.idleNodes > 0) {
    // The jobs already waiting, not those expected to arrive before the backlog clears (queueReach):
    // a start size holds for the job's run, and one fresh arrival reads as a burst.
    const lambda = nodePrice(queued.waiting, input.upNodes);
    const sizes = new Map<number, number>();
    for (const j of q0) {
      // Only a job that fits in the idle nodes can start in this pass; with no prior, only a job with a model can start below its size.
      if (!j.elastic || j.minNodes > input.idleNodes || (!j.model && priorOf() === undefined)) continue;
      const k = startSizeWhileWaiting(j, lambda, priorOf());
      // A size above the idle nodes starts nothing either (and the first waiting job keeps its own).
      if (k < preferredSize(j) && k <= input.idleNodes) sizes.set(j.id, k);
    }
    if (sizes.size > 0) {
      // In queue order again: the first pass's shortest-first order holds only behind its own first waiting job.
      const views = new Map<PendingJob, PendingJob>();
      const at = () =>
        q0.map((j) => {
          const k = sizes.get(j.id);
          if (k === undefined) return j;
          const v = sizedView(j, k);
          views.set(v, j);
          return v;
        });
      let sized = easyPass(input, at());
      // The first waiting job keeps its reservation at the size it asked for (it starts smaller only
      // when that fits at once): a size that rises in a later pass (λ falls) would delay it past its promise.
      const held = sized.b.reservation?.jobId;
      if (held !== undefined && sizes.delete(held)) sized = easyPass(input, at());
      b = sized.b;
      const byId = new Map<number, PendingJob>();
      q = sized.q.map((j) => {
        const o = views.get(j) ?? j;
        if (o !== j) byId.set(o.id, o);
        return o;
      });
      starts = countStarts(b).map((st) => {
        const j = byId.get(st.jobId);
        if (!j || sizes.get(st.jobId) !== st.nodes) return st;
        return { ...st, reason: `${st.reason}; ${st.nodes} of ${preferredSize(j)} nodes: ${queued.waiting} job(s) wait, a node-second is worth ${lambda.toFixed(4)} s, and its time plus its node-seconds' worth is least there (${j.model ? "its model" : prior !== undefined ? `efficiency ${prior.toFixed(2)} at the size asked, as the running jobs measured theirs` : "at most linear slowdown"})` };
      });
      queued = queueFigures(input, q, starts);
    }
  }
  const resizes: Resize[] = [];
  const notes: Note[] = [];
  const reservations: Reservation[] = b.reservation ? [b.reservation] : [];
  const head = firstWaiting(input, q, starts, 1)[0];
  let idle = b.free;
  // Nobody waits: the malleable jobs starting now take the idle nodes beyond the arrival reserve at
  // once, where their time drops most (start-size.ts), instead of growing into them later.
  if (!input.vectors && !b.reservation && queued.waiting === 0 && idle > 0 && starts.length > 0) {
    const byId = new Map(q.map((j) => [j.id, j]));
    const starting = starts.map((st) => ({ job: byId.get(st.jobId)!, nodes: st.nodes }));
    const surplus = queueWasReal(input) ? 0 : idle - arrivalReserve(input, starting.map((x) => x.job), idle);
    if (surplus > 0 && starting.some((x) => x.job.elastic)) {
      const add = growStarts(starting, surplus, priorOf(), () => input.config.defaultAdaptCost);
      if (add.size > 0) {
        starts = starts.map((st) => {
          const a = add.get(st.jobId);
          if (!a) return st;
          idle -= a;
          return { ...st, nodes: st.nodes + a, reason: `${st.reason}; ${a} idle node(s) more at once: nobody waits, the arrival reserve stays idle, and they save more of its time than an adaptation giving them back costs (${prior !== undefined ? `efficiency ${prior.toFixed(2)} at the size asked, as the running jobs measured theirs` : byId.get(st.jobId)!.model ? "its model" : "at most linear slowdown"})` };
        });
      }
    }
  }
  // The running jobs ebb may resize, priced only when a rule reads them (many passes resize nothing and read none).
  let candList: Cand[] | undefined;
  const cands = (): Cand[] => (candList ??= candidates(input));
  // The nodes of shrinks under way, read by several rules.
  let incomingSum: number | undefined;
  const incoming = (): number => (incomingSum ??= incomingNodes(input));

  const reservation = b.reservation && head && b.reservation.jobId === head.id ? b.reservation : undefined;
  // Nodes the reservation leaves over at its start, not yet promised to a start or a resize of this pass.
  let extra = reservation ? Math.max(0, b.extra) : Number.POSITIVE_INFINITY;
  const startedIds = idsOf(starts);
  let { waiting, reach: affected } = queued;
  const { wantNodes } = queued;
  // The head waits while malleable jobs start at full size in this pass: they start smaller when
  // the head then starts now and its wait is worth more than the time they lose (startRoom).
  if (head && reservation) {
    const room = startRoom(input, head, idle, reservation, starts, q);
    // The next job in line gets its reservation in the next pass (at this instant).
    if (room) return { starts: room, resizes, reservations: [], notes, again: true };
  }
  // Loans come back for the head when that starts it at its size sooner than any start below it,
  // if nobody waits behind it (whose backfill an earlier reservation would shut out) and the queue was not real.
  if (head && reservation && waiting === 1 && !queueWasReal(input)) {
    const back = loansForHead(input, head, reservation, idle + incoming(), idsOf(starts), priorOf());
    if (back) return { starts, resizes: back.resizes, reservations: [{ ...reservation, start: back.at, fromJobs: back.resizes.map((r) => r.jobId), reason: back.reason }], notes, again: true };
  }
  // Malleable jobs start below their size on the nodes left when the queue gains more than they lose, the head first.
  if (head && reservation && idle > 0) {
    for (const j of q) {
      if (idle <= 0) break;
      if (startedIds.has(j.id) || !j.elastic || j.minNodes > idle) continue;
      const isHead = j.id === head.id;
      const st = moldable(input, j, idle, reservation, extra, nodePrice(affected - 1, input.upNodes), isHead, priorOf());
      if (!st) continue;
      starts.push(st.start);
      idle -= st.start.nodes;
      waiting--;
      affected--;
      // The next job in line gets its reservation in the next pass (at this instant): nothing else now.
      if (isHead) return { starts, resizes, reservations: [], notes, again: true };
      extra -= st.fromExtra;
    }
  }
  const lambda = waiting <= 0 ? 0 : nodePrice(affected, input.upNodes);
  if (head && reservation) {
    // The first waiting jobs that would all start now, in queue order, if the nodes were there: the
    // head and as many followers as one round of shrinks can serve (each would otherwise wait at
    // least until the head's reservation, with no node free).
    const group = firstWaiting(input, q, starts, Math.max(1, input.config.admitDepth));
    const base = idle + incoming();
    let surplus = 0;
    for (const c of cands()) surplus += Math.max(0, c.job.nodes - c.job.minNodes);
    let k = 0;
    let want = 0;
    while (k < group.length && want + preferredSize(group[k]!) - base <= surplus) want += preferredSize(group[k++]!);
    // As many as one round serves, else the head alone.
    let order: GiveOrder<Cand> | undefined;
    let underway: number | undefined;
    let blocked: PendingJob[] | undefined;
    for (const kk of k > 1 ? [k, 1] : [k]) {
      k = kk;
      const need = group.slice(0, k).reduce((n, j) => n + preferredSize(j), 0) - base;
      if (need <= 0) break;
      order ??= new GiveOrder(cands(), (p) => priorityWeight(head.priority, p));
      underway ??= shrinksCommit(input);
      // Only the head alone says why it is not admitted.
      const admit = planAdmit(input, group.slice(0, k), need, reservation, order, underway, k === 1, (blocked ??= blockedBehind(input, q, starts, head, reservation, extra)));
      if (k === 1) notes.push(...admit.notes);
      if (admit.resizes.length > 0) {
        resizes.push(...admit.resizes);
        reservations.splice(0, reservations.length, { ...reservation, start: admit.at, fromJobs: admit.resizes.map((r) => r.jobId), reason: `ebb: ${admit.resizes.length} running job(s) give ${need} node(s) for ${k} waiting job(s), predicted gain ${sec(admit.gain)} > stretch ${sec(admit.stretch)}` });
        resizes.push(...planPriceShrinks(input, cands, idsOf(resizes), lambda, waiting, undefined, wantNodes - idle - incoming() - need, head?.priority));
        // The shrinks' nodes come back at their commits: the jobs behind may backfill on them now.
        return { starts, resizes, reservations, notes, again: true };
      }
    }
  }
  // A job that would backfill but for the nodes is admitted by shrinks the reservation survives (backfill-admit.ts).
  if (head && reservation && !input.vectors) {
    const got = admitBackfill(input, q, starts, head, reservation, idle + incoming(), extra, cands(), priorOf());
    if (got) {
      resizes.push(...got.resizes);
      idle = Math.max(0, idle - got.fromIdle);
      extra -= got.fromExtra;
    }
  }
  // While jobs wait, a node-second is worth λ: jobs whose work takes fewer node-seconds at a smaller size shrink.
  const res = reservation;
  const budget = { extra };
  resizes.push(...planPriceShrinks(input, cands, idsOf(resizes), lambda, waiting, res && { start: res.start, budget }, wantNodes - idle - incoming(), head?.priority));
  extra = budget.extra;
  const touched = idsOf(resizes);
  // Nobody waits: the nodes arrivals will ask for stay idle (reserve.ts); loans come back when the
  // idle nodes fall below them.
  let reserve = 0;
  if (!res && waiting <= 0) {
    const startingIds = idsOf(starts);
    reserve = arrivalReserve(input, q.filter((j) => startingIds.has(j.id)), idle);
    const short = reserve - idle - incoming();
    if (short > 0) {
      // Nobody waits: starts and loans given back leave the next pass nothing to do.
      return { starts, resizes: [...resizes, ...reclaim(input, short, (j) => candidate(j, input)?.speed, touched, "reserve", (give, lent) => `nobody waits, ${reserve} idle node(s) are kept for arrivals (the most the jobs in view asked for within ${input.config.defaultAdaptCost} s, the time a loan takes to come back): ${give} of the ${lent} node(s) lent beyond its first size back`)], reservations, notes, again: false };
    }
  }
  // Lend what nothing can use. Resource mode with nothing waiting: a job with a per-node shape may
  // also grow onto the nodes others hold part of, as many as hold one more node of its shape.
  const vectors = input.vectors;
  const own = vectors && !res ? (c: Cand) => Math.max(0, vectors.growable(c.job.id) - idle) : undefined;
  if (idle > reserve || own) {
    // With a job waiting, the nodes the reservation leaves over stay idle: they are what the
    // waiting jobs and the arrivals backfill into, and a loan is not given back for a backfill, so
    // every job that could have backfilled would wait for the borrower's end. Only the nodes the
    // reservation counts on are lent, to a job predicted to give them back (end) before it.
    const free: Lendable = res ? { any: 0, beforeOnly: idle - Math.min(idle, extra), until: res.start } : { any: Math.max(0, idle - reserve), beforeOnly: 0, until: Number.POSITIVE_INFINITY, own };
    // Nothing to lend (the reservation's extra nodes cover every idle one): no job is priced.
    if (free.any > 0 || free.beforeOnly > 0 || free.own) {
      // Settled jobs below their maximum; only they are priced when no rule has priced them all (nobody waits).
      const lendable = (j: JobState) => !touched.has(j.id) && j.nodes < j.maxNodes && movable(j, input);
      resizes.push(...planLend(input, candList ? candList.filter((c) => lendable(c.job)) : candidates(input, lendable), free, lambda));
    }
  }
  // Only shrinks leave the next pass something new to read at this instant (their nodes coming
  // back); after starts and loans alone it planned again in 0.2 % and 1 % of the repeats (issue 35,
  // lublin_256, 50 %, seed 1), which the next instant's pass now plans (sim README, "Engine details").
  return { starts, resizes, reservations, notes, again: resizes.some((r) => r.to < r.from) };
}

/**
 * Nobody waits, no loan is out, and no node is idle or no job may be lent one: the pass plans
 * nothing (no start; nothing shrinks while nobody waits but loans, which come back only from a job
 * that holds one; nothing is lent with no idle node or no candidate below its maximum).
 */
export function ebbQuiet(q: QuietState): boolean {
  return q.waiting === 0 && !q.lent() && (q.idle === 0 || !q.growable());
}

/** The running jobs ebb may resize (`candidate`), in running order; with `keep`, only those it keeps. */
function candidates(input: PassInput, keep?: (job: JobState) => boolean): Cand[] {
  const cands: Cand[] = [];
  for (const job of input.running) {
    if (keep && !keep(job)) continue;
    const c = candidate(job, input);
    if (c) cands.push(c);
  }
  return cands;
}

/** A running job ebb may resize: malleable, not adapting, with a speed it can read (`speedOf`). */
function candidate(job: JobState, input: PassInput): Cand | undefined {
  // The settle time guards growing on fresh measurements; giving nodes back to a waiting job does not wait for it.
  if (job.adapting || !job.elastic || job.atResizePoint === false || job.minNodes >= job.maxNodes || (job.sizes && job.sizes.length > 0)) return undefined;
  const speed = speedOf(job, input.now, input.config);
  return speed && new Cand(job, speed, remainingTime(job, input.now), input.config);
}

/**
 * EASY on the queue at the sizes asked for (or those of the views given), the jobs behind the
 * first waiting one tried shortest first (by requested time: shortest-job backfilled first, which
 * keeps the reservation and favours the jobs whose slowdown a wait hurts most). Returns the queue
 * in the order tried.
 */
function easyPass(input: PassInput, q0: readonly PendingJob[]): { q: readonly PendingJob[]; b: BatchCountsPlan } {
  // Resource mode: the pass on the nodes' resources tries them shortest first itself.
  if (input.vectors) return { q: q0, b: batch(input, q0, { rigid: true, shortestFirst: true }) };
  // Behind the first waiting job, the shortest (by requested time) are tried first (shortest job
  // backfilled first): its reservation is the same, and the shorter a job the more a wait weighs
  // on its slowdown. A higher priority still goes first (`shortestFirstOrder`): a heavy user's
  // short job does not pass a light user's longer one. Only jobs that fit in the nodes free at the
  // reservation (before backfilling) can be reordered by it; the others keep their place after them.
  // So the queue's order is needed only up to the reservation: no backfill in queue order is
  // planned that the shortest-first order then replaces. (Without a reservation, or with no node
  // free at it, the pass ends there anyway.)
  const upTo = batch(input, q0, { rigid: true, backfill: false });
  if (!upTo.reservation || upTo.free <= 0) return { q: q0, b: upTo };
  const h = q0.findIndex((j) => j.id === upTo.reservation!.jobId);
  const order = shortestBehind(q0, h, upTo.free);
  // The others cannot start in this pass: the batch needs only the jobs up to the head and those that fit.
  if (order) return { q: order.q, b: batch(input, order.ahead, { rigid: true }) };
  return { q: q0, b: batch(input, q0, { rigid: true }) };
}

interface Reordered {
  h: number;
  room: number;
  /** The queue up to the head, then the jobs behind it that fit in `room`, shortest first (undefined: fewer than two fit). */
  order?: { ahead: readonly PendingJob[]; q: readonly PendingJob[] };
}

const reordered = new WeakMap<readonly PendingJob[], Reordered>();

/**
 * The queue `q` with the jobs behind its head (at `h`) that fit in `room` nodes tried shortest
 * first, the others after them; kept per queue array (a new queue is a new array: common.ts), so
 * that passes on the same queue, head and room sort nothing and hand the batch pass the same array.
 */
function shortestBehind(q: readonly PendingJob[], h: number, room: number): Reordered["order"] {
  const known = reordered.get(q);
  if (known && known.h === h && known.room === room) return known.order;
  const fit: PendingJob[] = [];
  const rest: PendingJob[] = [];
  for (let i = h + 1; i < q.length; i++) (q[i]!.minNodes <= room ? fit : rest).push(q[i]!);
  let order: Reordered["order"];
  if (h >= 0 && fit.length > 1) {
    fit.sort(shortestFirstOrder);
    const ahead = [...q.slice(0, h + 1), ...fit];
    order = { ahead, q: [...ahead, ...rest] };
  }
  reordered.set(q, { h, room, order });
  return order;
}

/** The jobs left waiting after `starts`: how many, the nodes they ask for, and how many jobs a node-second saved reaches (`queueReach`). */
function queueFigures(input: PassInput, q: readonly PendingJob[], starts: readonly CountStart[]): { waiting: number; wantNodes: number; reach: number } {
  const startedIds = idsOf(starts);
  let waiting = 0;
  let wantNodes = 0;
  let oldest = input.now;
  let work = 0;
  for (const j of q) {
    if (startedIds.has(j.id) || j.minNodes > input.upNodes) continue;
    waiting++;
    wantNodes += preferredSize(j);
    oldest = Math.min(oldest, j.submitTime);
    work += preferredSize(j) * j.timeLimit;
  }
  if (waiting === 0) return { waiting, wantNodes, reach: 0 };
  for (const j of input.running) work += j.nodes * remainingTime(j, input.now);
  return { waiting, wantNodes, reach: queueReach(input.now / 1000, input.upNodes, waiting, oldest / 1000, work, input.config.interval) };
}

/**
 * Starts of malleable jobs in this pass give nodes to the blocked head, where each costs least
 * (its time at one node fewer, by its declared model or at most linearly slower), if the head's
 * wait until its reservation exceeds the time they lose together: the head starts now too.
 */
function startRoom(input: PassInput, head: PendingJob, idle: number, res: Reservation, starts: readonly CountStart[], q: readonly PendingJob[]): CountStart[] | undefined {
  const size = head.elastic ? head.minNodes : preferredSize(head);
  const need = size - idle;
  if (need <= 0 || starts.length === 0) return undefined;
  const ids = new Set(starts.map((st) => st.jobId));
  const byId = new Map<number, PendingJob>();
  for (const j of q) if (ids.has(j.id) && j.elastic) byId.set(j.id, j);
  if (byId.size === 0) return undefined;
  const timeAt = (j: PendingJob, k: number) => j.timeLimit * (j.model ? runtime(j.model, k) / runtime(j.model, preferredSize(j)) : preferredSize(j) / k);
  const sized = starts.map((st) => ({ st, job: byId.get(st.jobId), k: st.nodes }));
  const donors = sized.filter((x) => x.job?.elastic && x.k > x.job.minNodes);
  let surplus = 0;
  for (const d of donors) surplus += d.k - d.job!.minNodes;
  if (surplus < need) return undefined;
  let loss = 0;
  for (let left = need; left > 0; left--) {
    let best: (typeof donors)[number] | undefined;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const d of donors) {
      if (d.k <= d.job!.minNodes) continue;
      const c = timeAt(d.job!, d.k - 1) - timeAt(d.job!, d.k);
      if (c < bestCost) [best, bestCost] = [d, c];
    }
    best!.k--;
    loss += bestCost;
  }
  const gain = (res.start - input.now) / 1000;
  if (!(gain > loss)) return undefined;
  return [
    ...sized.map((x) => (x.k === x.st.nodes ? x.st : { ...x.st, nodes: x.k, reason: `${x.st.reason}; ${x.st.nodes - x.k} node(s) fewer so that job ${head.id} starts now too: it would wait ${sec(gain)}, the jobs starting smaller lose ${sec(loss)} at most` })),
    { jobId: head.id, nodes: size, reason: `fcfs: malleable jobs starting in this pass make room (its wait ${sec(gain)} > their loss ${sec(loss)})` },
  ];
}

/**
 * Shrinks priced by the node price λ (sched/price.ts): a running job shrinks to the size where its
 * own remaining time plus λ × its node-seconds is least, if that gains more than the adaptation.
 * The most gain per node first, at most `cap` nodes in all (the last one shrinks less if that
 * still pays). EASY's reservation holds: a job whose end the reservation counts on and that would then end
 * after it keeps at the reservation the nodes it still holds, which must come out of the extra nodes.
 */
function planPriceShrinks(input: PassInput, candsOf: () => Cand[], skip: ReadonlySet<number>, lambda: number, waiting: number, res: { start: number; budget: { extra: number } } | undefined, cap: number, headPriority: number | undefined): Resize[] {
  if (!(lambda > 0) || cap <= 0) return [];
  const out: Resize[] = [];
  const options: { c: Cand; p: Priced; s: Shrink; w: number; lambda: number }[] = [];
  for (const c of candsOf()) {
    if (skip.has(c.job.id) || c.job.nodes <= c.job.minNodes) continue;
    const p: Priced = c;
    // With priorities its own seconds weigh w against the head's: a node-second is worth λ / w of
    // them (at least a thousandth of a second weighs: a job of no priority still keeps a price).
    const w = Math.max(MIN_WEIGHT, priorityWeight(headPriority, c.job.priority));
    const s = bestShrink(p, c.job.minNodes, lambda / w);
    if (s) options.push({ c, p, s, w, lambda: lambda / w });
  }
  // The shrinks that gain most per node (in the head's seconds) first, and no more nodes than the
  // waiting jobs lack: a node freed beyond what they could use would only idle, or be lent back at
  // the cost of two adaptations.
  options.sort((x, y) => (y.w * y.s.gain) / (y.c.job.nodes - y.s.to) - (x.w * x.s.gain) / (x.c.job.nodes - x.s.to) || x.c.job.id - y.c.job.id);
  let left = cap;
  for (const o of options) {
    if (left <= 0) break;
    const { c, p } = o;
    // A node-second in its own seconds.
    const own = o.lambda;
    let s = o.s;
    if (c.job.nodes - s.to > left) {
      const to = c.job.nodes - left;
      const gain = price(p, p.n, own) - price(p, to, own);
      const cost = c.cost(left);
      if (!(gain > cost)) continue;
      s = { to, gain, cost, stretch: remAt(p, to) - p.rem + cost, saved: p.n * p.rem - to * remAt(p, to) };
    }
    if (res) {
      const endOld = input.now + c.rem * 1000;
      const endNew = input.now + (remAt(p, s.to) * END_MARGIN + s.cost) * 1000;
      if (endOld <= res.start && endNew > res.start) {
        if (s.to > res.budget.extra) continue;
        res.budget.extra -= s.to;
      }
    }
    left -= c.job.nodes - s.to;
    out.push({
      jobId: c.job.id,
      from: c.job.nodes,
      to: s.to,
      rule: "admit",
      reason: `${waiting} job(s) wait: a node-second is worth ${lambda.toFixed(4)} s of their summed turnaround${o.w === 1 ? "" : `, ${own.toFixed(4)} s of its own time (its priority is ${(o.w * 100).toFixed(1)} % of the first waiting job's)`}; at ${s.to} nodes its work takes ${Math.round(s.saved)} node-s fewer, the queue gains ${sec(own * s.saved)} > its stretch ${sec(s.stretch)} (net ${sec(s.gain)} > adaptation ${sec(s.cost)}); ${c.speed.source}`,
    });
  }
  return out;
}

/**
 * A malleable waiting job starts now on the `idle` nodes below the size it asked for if the queue's
 * gain exceeds its own loss (`moldableWorth`: its time at k by its declared model, else the bound
 * that time grows at most linearly as nodes drop; it could get its size no sooner than the
 * reservation). Behind the head, EASY's reservation holds: it must be predicted to end before the
 * reservation, or fit in the nodes the reservation leaves over (`extra`): on fewer nodes, down to
 * those, if that is what it takes (elastic backfilling at a reduced size).
 */
function moldable(input: PassInput, job: PendingJob, idle: number, res: Reservation, extra: number, lambda: number, isHead: boolean, prior: number | undefined): { start: CountStart; fromExtra: number } | undefined {
  const want = preferredSize(job);
  if (!job.elastic) return undefined;
  const speed = startRatio(job, prior);
  const at = (k: number) => {
    if (k < job.minNodes || k <= 0) return undefined;
    // Its predicted time by its speed (start-size.ts); whether it ends before the reservation by its limit there.
    const ratio = k === want ? 1 : speed(k);
    const bound = k === want ? 1 : job.model ? ratio : want / k;
    if (!(ratio > 0) || !Number.isFinite(ratio)) return undefined;
    const w = moldableWorth(input.now / 1000, res.start / 1000, job.timeLimit, ratio, k, lambda);
    if (!w.ok) return undefined;
    const endNow = input.now + job.timeLimit * Math.max(1, bound) * 1000;
    const inTime = isHead || endNow <= res.start;
    if (!inTime && k > extra) return undefined;
    return { k, w, inTime };
  };
  // Behind the head, a job that would run past the reservation on the idle nodes may still fit in the nodes it leaves over.
  const got = at(Math.min(idle, want)) ?? (extra < Math.min(idle, want) ? at(Math.min(extra, want)) : undefined);
  if (!got) return undefined;
  const { k, w, inTime } = got;
  const why = `${k} of ${want} nodes now, predicted (${job.model ? "its model" : prior !== undefined ? `efficiency ${prior.toFixed(2)} at the size asked, as the running jobs measured theirs` : "at most linear slowdown"}) to end ${w.ownLoss <= 0 ? `${sec(-w.ownLoss)} sooner` : `${sec(w.ownLoss)} later`} than at ${want} from ${isHead ? "its" : "the head's"} reservation; the ${lambda > 0 ? `queue gains ${sec(w.queueGain)} (λ ${lambda.toFixed(4)} s per node-second)` : "queue is empty"}${isHead ? "" : inTime ? "; ends before the reservation" : "; in the nodes the reservation leaves over"}`;
  return { start: { jobId: job.id, nodes: k, reason: `moldable: ${why}` }, fromExtra: inTime ? 0 : k };
}

/**
 * The head, blocked while running jobs hold nodes lent to them beyond their first size (`loanOf`),
 * gets them back if they cover it: when its size after the give-back (one adaptation) ends it
 * sooner than the best start on the nodes free now (`moldable`'s ends: its time at k by its speed,
 * else at most linearly slower). A loan was granted only if it paid for the give-back too.
 */
function loansForHead(input: PassInput, head: PendingJob, res: Reservation, free: number, starting: ReadonlySet<number>, prior: number | undefined): { resizes: Resize[]; at: number; reason: string } | undefined {
  const want = preferredSize(head);
  const need = want - free;
  if (need <= 0) return undefined;
  // Its reservation comes before any give-back could: nothing to take back.
  if (res.start <= input.now + input.config.defaultAdaptCost * 1000) return undefined;
  let lent = 0;
  for (const j of input.running) if (j.elastic && !j.adapting) lent += loanOf(j);
  if (lent < need) return undefined;
  // Each reason is finished below, once the give-backs' commit is known.
  const resizes = reclaim(input, need, (j) => candidate(j, input)?.speed, starting, "admit", (give, lent) => `${give} of the ${lent} node(s) lent beyond its first size back`);
  let got = 0;
  // It is promised the last give-back's commit: each costs its own adaptation (fixed + per node moved).
  let giveBack = 0;
  const byId = new Map(input.running.map((j) => [j.id, j]));
  for (const r of resizes) {
    got += r.from - r.to;
    giveBack = Math.max(giveBack, adaptationCost(byId.get(r.jobId)!, input.config, r.from - r.to));
  }
  if (got < need) return undefined;
  // `free` counts the nodes of shrinks under way too: it starts once they have come back as well.
  const at = Math.max(input.now + giveBack * 1000, shrinksCommit(input));
  if (res.start <= at) return undefined;
  const k = Math.min(free, want);
  let than = `not at its reservation in ${sec((res.start - input.now) / 1000)}`;
  if (head.elastic && k >= head.minNodes && k > 0) {
    const ratio = startRatio(head, prior)(k);
    const bound = head.model ? ratio : want / k;
    if (Number.isFinite(ratio) && ratio > 0 && head.timeLimit * Math.max(1, Math.min(ratio, bound)) <= head.timeLimit + giveBack) return undefined;
    than = `sooner than on the ${k} node(s) free now`;
  }
  const sooner = `it starts at its ${want} nodes after one give-back (${sec(giveBack)}), ${than}`;
  for (const r of resizes) r.reason = `waiting job ${head.id} lacks ${need} node(s) and ${sooner}: ${r.reason}`;
  return { resizes, at, reason: `ebb: ${need} lent node(s) back for it: ${sooner}` };
}

/** The most jobs behind the head a pass tries to admit by shrinking for a backfill. */
const BACKFILL_TRIES = 16;

/**
 * The first job behind the head that would backfill but for the nodes (backfill-admit.ts) and whose
 * wait for them is worth more than the stretch of the jobs shrunk for it (`planAdmit`, its wait
 * running until enough jobs are expected to end), taking nodes only where the head's reservation
 * holds (`donorFloor`). One job a pass: the nodes it frees are the next pass's backfill.
 */
function admitBackfill(input: PassInput, q: readonly PendingJob[], starts: readonly CountStart[], head: PendingJob, res: Reservation, free: number, extra: number, cands: Cand[], prior: number | undefined): { resizes: Resize[]; fromIdle: number; fromExtra: number } | undefined {
  let floors: number[] | undefined;
  const started = idsOf(starts);
  let cheapest = Number.POSITIVE_INFINITY;
  for (const c of cands) if (c.job.nodes > c.job.minNodes) cheapest = Math.min(cheapest, c.cost(1));
  if (!Number.isFinite(cheapest)) return undefined;
  const wants = backfillWants(q, started, head.id, res, input.now, free, extra, cheapest * 1000, sortedEndings(input), BACKFILL_TRIES);
  // The order in which the donors give nodes, one for each weighing of their seconds (`priorityWeight`): shared by the wants.
  const orders = new Map<number | undefined, GiveOrder<Cand>>();
  let underway: number | undefined;
  for (const w of wants) {
    if (!floors) {
      floors = cands.map((c) => {
        const endAt = (k: number) => input.now + (c.rem * c.speed.ratio(k) * END_MARGIN + c.cost(c.job.nodes - k)) * 1000;
        return donorFloor(c.job.nodes, c.job.minNodes, input.now + c.rem * 1000, res.start, endAt);
      });
      // No job may give a node: nothing to admit.
      if (!cands.some((c, i) => floors![i]! < c.job.nodes)) return undefined;
    }
    if (!Number.isFinite(w.otherwise)) continue;
    const p = w.job.priority;
    let order = orders.get(p);
    if (!order) orders.set(p, (order = new GiveOrder(cands, (x) => priorityWeight(p, x), floors)));
    underway ??= shrinksCommit(input);
    // At the size it asked for, else at its minimum (its loss there priced in: `atMinimum`).
    const want = preferredSize(w.job);
    const got = backfillAt(input, { job: w.job, need: w.need, otherwise: w.otherwise, fromExtra: w.fromExtra, nodes: want }, want, res, order, underway) ?? backfillAt(input, lowered(w, input.now, cheapest * 1000, res, extra, prior), want, res, order, underway);
    if (got) return got;
  }
  return undefined;
}

/** A want at its minimum (`atMinimum`), the job's speed there by `startRatio` and its bound by its model, else linear. */
function lowered(w: BackfillWant, now: number, delay: number, res: Reservation, extra: number, prior: number | undefined): (BackfillWant & { nodes: number }) | undefined {
  const want = preferredSize(w.job);
  if (!w.job.elastic || w.job.minNodes >= want) return undefined;
  const ratio = startRatio(w.job, prior)(w.job.minNodes);
  return atMinimum(w, now, delay, res, extra, ratio, w.job.model ? ratio : want / w.job.minNodes);
}

/** The backfill admit of a want at `x.nodes`, priced by `planAdmit` against its start otherwise. */
function backfillAt(input: PassInput, x: (BackfillWant & { nodes: number }) | undefined, want: number, res: Reservation, order: GiveOrder<Cand>, underway: number): { resizes: Resize[]; fromIdle: number; fromExtra: number } | undefined {
  if (!x) return undefined;
  // planAdmit reads only the reservation's start: no copy of the rest.
  const admit = planAdmit(input, [x.job], x.need, { jobId: res.jobId, start: x.otherwise, nodes: res.nodes }, order, underway, false, []);
  if (admit.resizes.length === 0) return undefined;
  const at = x.nodes < want ? ` (on ${x.nodes} of its ${want} nodes, its minimum)` : "";
  const resizes = admit.resizes.map((r) => ({ ...r, reason: `backfill${at}: ${r.reason}; the head's reservation holds (every shrunk job ends before it, or runs past it anyway)` }));
  return { resizes, fromIdle: x.nodes - x.need, fromExtra: x.fromExtra };
}

interface Admit {
  resizes: Resize[];
  notes: Note[];
  gain: number;
  stretch: number;
  at: number;
}

/**
 * How much a second of a job of priority `p` weighs against one of the head's (priority `head`):
 * their ratio, when both have one (fair share: a heavy user's running job gives its nodes to a
 * light user's waiting one for less than the time the light user gains); else 1 (submit order:
 * every job's second is worth the same).
 */
export function priorityWeight(head: number | undefined, p: number | undefined): number {
  return head !== undefined && p !== undefined && head > 0 ? Math.max(0, p) / head : 1;
}

/**
 * The waiting jobs behind the head that no backfill can start before it: each runs past its
 * reservation by its limit and does not fit in the nodes the reservation leaves over (`extra`).
 * Their wait runs until the head has started at least, so an admit that starts the head sooner
 * starts the queue behind it sooner too: the head's gain is theirs as well (`planAdmit`).
 */
function blockedBehind(input: PassInput, q: readonly PendingJob[], starts: readonly CountStart[], head: PendingJob, res: Reservation, extra: number): PendingJob[] {
  const started = idsOf(starts);
  const out: PendingJob[] = [];
  for (const j of q) {
    if (j.id === head.id || started.has(j.id) || j.minNodes > input.upNodes) continue;
    if (input.now + j.timeLimit * 1000 > res.start && preferredSize(j) > extra) out.push(j);
  }
  return out;
}

/** When the last shrink under way commits (ms; now if none): an admit counts on their nodes too. */
function shrinksCommit(input: PassInput): number {
  let at = input.now;
  for (const j of input.running) if (j.adapting && j.resizingTo !== undefined && j.resizingTo < j.nodes) at = Math.max(at, j.adaptEnd ?? input.now + (j.adaptCost ?? input.config.defaultAdaptCost) * 1000);
  return at;
}

/**
 * Take `need` nodes from the running jobs where each node costs least (their predicted stretch,
 * weighed by priority against the head's: `order`, built with `priorityWeight` of the head's
 * priority), and keep the plan only if the waiting jobs' predicted gain exceeds the stretch of
 * every shrunk job.
 */
function planAdmit(input: PassInput, group: readonly PendingJob[], need: number, res: Reservation, order: GiveOrder<Cand>, underway: number, explain: boolean, blocked: readonly PendingJob[]): Admit {
  const head = group[0]!;
  const none: Admit = { resizes: [], notes: [], gain: 0, stretch: 0, at: res.start };
  if (order.surplus < need) return none;
  // With priorities, a job's seconds weigh its priority against the head's (`priorityWeight`).
  let waiters = 0;
  for (const g of group) waiters += priorityWeight(head.priority, g.priority);
  // The jobs behind it that no backfill starts before it wait as long (`blockedBehind`).
  const inGroup = new Set(group.map((g) => g.id));
  let behind = 0;
  for (const g of blocked) {
    if (inGroup.has(g.id)) continue;
    behind++;
    waiters += priorityWeight(head.priority, g.priority);
  }
  // Why not, for people (`explain`: the text is built only when it is read).
  const not = (text: () => string): Admit => (explain ? { ...none, notes: [{ jobId: head.id, text: `not admitted by shrinking: ${text()}` }] } : none);
  // It also counts on the nodes of shrinks under way: it starts when the last of them commits too
  // (`underway`). The head's reservation holds only if the shrinks commit before it: the cost is
  // an estimate, so it must fit COMMIT_SAFETY times over.
  const tooClose = (at: number, commit: number, about: string) => (input.now + COMMIT_SAFETY * (at - input.now) > res.start ? not(() => `its reservation in ${sec((res.start - input.now) / 1000)} is too close for an adaptation of ${about} ${sec(commit)}`) : undefined);
  // No shrink commits sooner than the cheapest one-node adaptation: too close even then, or a
  // stretch already above the gain it could have, settles it before every node is priced.
  const cheapest = order.cheapest;
  const atLeast = Math.max(input.now + cheapest * 1000, underway);
  const early = tooClose(atLeast, cheapest, "at least");
  if (early) return early;
  const gainAtMost = (waiters * (res.start - atLeast)) / 1000;
  // The stretch is the sum of the marginal stretches taken (each >= 0: fewer nodes never run faster).
  const limit = gainAtMost * (1 + 1e-9) + 1e-9;
  const tooMuch = (taken: number) => `${need} node(s) would start it at most ${sec(Math.max(0, gainAtMost))} before its reservation, the shrunk jobs would lose more than ${sec(taken)}`;
  // A bound settles most without working the order out (GiveOrder.surelyExceeds); the head's note
  // names the stretch, so it works the order out only when the note is read (the order is pure).
  if (order.surelyExceeds(need, limit)) {
    if (!explain) return none;
    let text: string | undefined;
    return { ...none, notes: [{ jobId: head.id, get text() { return (text ??= `not admitted by shrinking: ${tooMuch(order.exceeds(need, limit)!)}`); } }] };
  }
  const taken = order.exceeds(need, limit);
  if (taken !== undefined) return not(() => tooMuch(taken));
  const chosen = order.given(need);
  let stretch = 0;
  let commit = 0;
  for (const { c, give } of chosen) {
    stretch += order.stretchAt(c, give);
    commit = Math.max(commit, c.cost(give));
  }
  const at = Math.max(input.now + commit * 1000, underway);
  const gain = (waiters * (res.start - at)) / 1000;
  const late = tooClose(at, commit, "about");
  if (late) return late;
  if (!(gain > stretch)) {
    return not(() => `${need} node(s) from ${chosen.length} job(s) would start it ${sec(Math.max(0, gain))} before its reservation, the shrunk jobs would lose ${sec(stretch)}`);
  }
  const resizes: Resize[] = [];
  for (const { c, give } of chosen) {
    const lose = c.rem * (c.speed.ratio(c.job.nodes - give) - 1);
    resizes.push({
      jobId: c.job.id,
      from: c.job.nodes,
      to: c.job.nodes - give,
      rule: "admit",
      reason: `job ${head.id}${group.length > 1 ? ` (and ${group.length - 1} behind it)` : ""}${behind > 0 ? `, with ${behind} job(s) behind that no backfill starts before it,` : ""} waits until its reservation in ${sec((res.start - input.now) / 1000)}: give ${give} node(s) so it starts in about ${sec(commit)}; predicted gain ${sec(gain)} > stretch ${sec(stretch)} of all shrunk jobs (this one: +${sec(lose)} work, ${sec(c.cost(give))} adaptation; ${c.speed.source})`,
    });
  }
  return { resizes, notes: [], gain, stretch, at };
}

/**
 * Idle nodes to running jobs, one node at a time to the job whose remaining time drops most by it;
 * a job keeps its grant only if the time saved pays for growing and for giving the nodes back.
 */
/** Idle nodes to lend: any, those only a job that ends before `until` may hold, and a job's own (resource mode: nodes others hold part of). */
interface Lendable {
  any: number;
  beforeOnly: number;
  until: number;
  own?: (c: Cand) => number;
}

function planLend(input: PassInput, cands: Cand[], free: Lendable, lambda: number): Resize[] {
  let pool = cands;
  const priced = (c: Cand): Priced => c;
  for (let round = 0; round < 3 && pool.length > 0; round++) {
    const grant = greedyLend(input, pool, free, lambda);
    // F(n) − F(m) includes this adaptation once (and λ × the node-seconds); the second is giving the nodes back.
    const pays = (c: Cand) => {
      const m = c.job.nodes + (grant.get(c.job.id) ?? 0);
      const p = priced(c);
      return price(p, p.n, lambda) - price(p, m, lambda) > c.cost(m - c.job.nodes);
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
        reason: `${g} idle node(s) nothing else can use: remaining ${sec(c.rem)} -> ${sec(after)} at ${m} nodes, predicted gain ${sec(c.rem - after)}${lambda > 0 ? ` − ${sec(lambda * (m * after + m * c.cost(g) - c.job.nodes * c.rem))} for the node-seconds at ${lambda.toFixed(4)} s each` : ""} > 2 adaptations of ${sec(c.cost(g))} (grow, and give back)${Number.isFinite(free.until) ? `; a reservation at +${sec((free.until - input.now) / 1000)} is kept` : ""}; ${c.speed.source}`,
      });
    }
    return out;
  }
  return [];
}

function greedyLend(input: PassInput, pool: readonly Cand[], free: Lendable, lambda: number): Map<number, number> {
  const grant = new Map<number, number>();
  const size = (c: Cand) => c.job.nodes + (grant.get(c.job.id) ?? 0);
  const gainOf = (c: Cand) => {
    const m = size(c);
    const r0 = c.remainingAt(m, input.now);
    const r1 = c.remainingAt(m + 1, input.now);
    return r0 + lambda * m * r0 - (r1 + lambda * (m + 1) * r1);
  };
  for (const c of pool) c.key = gainOf(c);
  const heap = new Heap<Cand>((x, y) => x.key > y.key || (x.key === y.key && x.job.id < y.job.id));
  for (const c of pool) heap.push(c);
  let any = free.any;
  let before = free.beforeOnly;
  const own = new Map<number, number>();
  if (free.own) for (const c of pool) own.set(c.job.id, free.own(c));
  let owned = 0;
  for (const n of own.values()) owned += n;
  let worthless = false;
  while ((any > 0 || before > 0 || owned > 0) && heap.size > 0 && !worthless) {
    const c = heap.pop()!;
    // It takes nodes while its next one still gains most (the heap's order: key, then job id), as
    // popping it again would.
    for (;;) {
      if (!(c.key > 0)) {
        worthless = true;
        break;
      }
      const m = size(c) + 1;
      // Nodes the reservation counts on go only to a job predicted to end (and give them back) before it.
      const endsBefore = input.now + (c.remainingAt(m, input.now) * END_MARGIN + c.cost(m - c.job.nodes)) * 1000 <= free.until;
      const mine = own.get(c.job.id) ?? 0;
      if (mine > 0) {
        own.set(c.job.id, mine - 1);
        owned--;
      } else if (before > 0 && endsBefore) before--;
      else if (any > 0) any--;
      else break;
      grant.set(c.job.id, (grant.get(c.job.id) ?? 0) + 1);
      if (m >= c.job.maxNodes) break;
      c.key = gainOf(c);
      const top = heap.peek();
      if (!(any > 0 || before > 0 || owned > 0) || (top && !(c.key > top.key || (c.key === top.key && c.job.id < top.job.id)))) {
        heap.push(c);
        break;
      }
    }
  }
  return grant;
}
