/**
 * Process-local online loop detection over communication call sites (dissertation §10.2.1).
 * Pure: no clock, no I/O. Each communication call is one `step(site, type, tEntry, tExit)`;
 * nodes are call sites, edges observed successions. See README.md for the algorithm.
 *
 * The expected path (a known edge inside a known loop, "verification mode") touches only typed
 * arrays: a 4-slot successor cache of the previous node, a version check, a handful of counter
 * updates. No allocation, no Map lookup, independent of the CFG size.
 */
import { OpType } from "./types.ts";

/** How a step was classified. */
export const Kind = {
  /** Not in any loop (yet). */
  Outside: 0,
  /** A node was revisited: a loop with this node as head was detected. */
  LoopDetected: 1,
  /** Inside the current loop along its body or back edge. */
  InLoop: 2,
  /** Left a loop for a node never seen before. */
  UnexpectedExit: 3,
  /** Entered a known loop at a body node, from outside it. */
  BodyReentry: 4,
  /** Entered a known loop at its head, from outside it. */
  HeadReentry: 5,
  /** The CFG is full: the site was not recorded. */
  Skipped: 6,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export const KIND_NAMES = [
  "outside",
  "loop-detected",
  "in-loop",
  "unexpected-exit",
  "body-reentry",
  "head-reentry",
  "skipped",
] as const;

/** Set in `step()`'s result when the step changed the CFG's structure. */
export const STRUCTURAL = 16;

/** Structural event kinds (bits of an event report). */
export const EventBit = {
  loopDetected: 1,
  unexpectedExit: 2,
  bodyReentry: 4,
  headReentry: 8,
  branch: 16,
} as const;

/** One structural-change report: everything that changed since the previous report. */
export interface CfgEvent {
  time: number;
  /** Bit set of `EventBit`s that happened since the previous report. */
  bits: number;
  /** How many structural changes since the previous report. */
  count: number;
}

/** One performance sample, taken at a loop-head visit after the sampling timer expired. */
export interface CfgSample {
  /** Site id of the loop head. */
  head: number;
  time: number;
  /** Visits of the head so far (iterations + 1). */
  visits: number;
  /** First and latest visit of the head: TLT = (last - created) / visits. */
  created: number;
  last: number;
  /** MPI time of the process from the head's detection to this visit (nested loops included). */
  tmt: number;
  /** Since the previous sample of this head (or its detection): iterations, wall time, MPI time. */
  windowIterations: number;
  windowTime: number;
  windowMpi: number;
}

/** One row of the CFG (Listing 10.2), in site ids. */
export interface CfgNodeRow {
  site: number;
  type: OpType;
  head: boolean;
  body: boolean;
  /** Re-entries (unexpected: new entry edges into this node's loop at this node). */
  re: number;
  /** Revisits (visits - 1). */
  rv: number;
  /** For a head: the source of its back edge. */
  tail: number | null;
  /** For a body node: its immediate loop head. */
  headOf: number | null;
  /** For a re-entered node: where the last re-entry came from. */
  reentrySource: number | null;
  created: number;
  last: number;
  /**
   * For a head: when its loop was detected and its visit count then. TMT counts from there, so
   * the loop's time is `last - detected` over `visits - detectedVisits` iterations.
   */
  detected: number;
  detectedVisits: number;
  /**
   * For a head: the MPI time since its detection, inclusive — every call in the loop's span, its
   * nested loops' included, as TLT includes their time (README: "Inclusive MPI time").
   */
  tmt: number;
  /** For a head: `tmt` as it was at its last visit (the MPI time from detection to `last`). */
  tmtLast: number;
  /** For a body node: summed time from the head's visit to this node's, and how many times. */
  offset: number;
  offsetCount: number;
}

export interface DetectorOptions {
  /** Most nodes kept; further sites are skipped (counted in `skipped`). Default 4096. */
  capacity?: number;
  /** Sampling interval, in the unit of the step times (default 60e9: 60 s in ns). */
  interval?: number;
  /** Time the sampling timer starts from (default 0). */
  start?: number;
}

const HEAD = 1;
const BODY = 2;
const SLOTS = 4;
const TRAIL = 8192;
const MAX_DEPTH = 256;

/** A copy of `a` with room for `n` entries, the new ones set to `fill`. */
function grown<A extends Float64Array | Int32Array | Uint8Array>(a: A, n: number, fill = 0): A {
  const b = new (a.constructor as new (n: number) => A)(n);
  (b as Float64Array).set(a as Float64Array);
  if (fill !== 0) (b as Float64Array).fill(fill, a.length);
  return b;
}

export class Detector {
  readonly capacity: number;
  private interval: number;
  private readonly index = new Map<number, number>();
  private readonly edges = new Set<number>();
  private size = 0;
  // Per node (succ*: SLOTS per node). They start small and grow with the CFG up to `capacity`:
  // a rank whose program has a handful of call sites should not pay for 4096 nodes at start.
  private site = new Float64Array(0);
  private type = new Uint8Array(0);
  private flags = new Uint8Array(0);
  private visits = new Float64Array(0);
  private headOf = new Int32Array(0);
  private tailOf = new Int32Array(0);
  private re = new Int32Array(0);
  private reSrc = new Int32Array(0);
  private created = new Float64Array(0);
  private last = new Float64Array(0);
  private lastStep = new Float64Array(0);
  private iterStart = new Float64Array(0);
  /** Per head: the process's MPI time total at its detection. */
  private mpiAtDetect = new Float64Array(0);
  private offset = new Float64Array(0);
  private offsetN = new Float64Array(0);
  private tmtAtLast = new Float64Array(0);
  private detT = new Float64Array(0);
  private detV = new Float64Array(0);
  private sVisits = new Float64Array(0);
  private sTime = new Float64Array(0);
  /** Per head: the process's MPI time total at its previous sample. */
  private sMpi = new Float64Array(0);
  private succSite = new Float64Array(0);
  private succNode = new Int32Array(0);
  private succKind = new Uint8Array(0);
  private succVer = new Int32Array(0);
  private readonly trail = new Int32Array(TRAIL);
  /** Position of the newest step in `trail` (stepNo mod TRAIL, kept as an int). */
  private tpos = TRAIL - 1;
  private nextSlot = new Uint8Array(0);
  private version = 1;
  private stepNo = -1;
  private prev = -1;
  private cur = -1;
  /** The process's MPI time so far: each loop's TMT is its growth over the loop's span. */
  private mpi = 0;
  private nextSampleAt: number;
  private nextEventAt: number;
  private eventBits = 0;
  private eventCount = 0;
  /** Steps skipped because the CFG was full. */
  skipped = 0;
  /** Reported events and samples, oldest first; the caller drains them (`drain*`). */
  private events: CfgEvent[] = [];
  private samples: CfgSample[] = [];

  constructor(opts: DetectorOptions = {}) {
    const cap = opts.capacity ?? 4096;
    if (!Number.isInteger(cap) || cap < 1 || cap > 1 << 20) throw new RangeError(`capacity: ${cap} is not an integer in 1..${1 << 20}`);
    const interval = opts.interval ?? 60e9;
    if (!(interval >= 0)) throw new RangeError(`interval: ${interval} is not >= 0`);
    this.capacity = cap;
    this.interval = interval;
    const start = opts.start ?? 0;
    this.nextSampleAt = start + interval;
    this.nextEventAt = start;
    this.room(Math.min(cap, 64));
  }

  /** Room for `n` nodes in every per-node array, keeping what they hold. */
  private room(n: number): void {
    this.site = grown(this.site, n);
    this.type = grown(this.type, n);
    this.flags = grown(this.flags, n);
    this.visits = grown(this.visits, n);
    this.headOf = grown(this.headOf, n, -1);
    this.tailOf = grown(this.tailOf, n, -1);
    this.re = grown(this.re, n);
    this.reSrc = grown(this.reSrc, n, -1);
    this.created = grown(this.created, n);
    this.last = grown(this.last, n);
    this.lastStep = grown(this.lastStep, n);
    this.iterStart = grown(this.iterStart, n);
    this.mpiAtDetect = grown(this.mpiAtDetect, n);
    this.offset = grown(this.offset, n);
    this.offsetN = grown(this.offsetN, n);
    this.tmtAtLast = grown(this.tmtAtLast, n);
    this.detT = grown(this.detT, n);
    this.detV = grown(this.detV, n);
    this.sVisits = grown(this.sVisits, n);
    this.sTime = grown(this.sTime, n);
    this.sMpi = grown(this.sMpi, n);
    this.succSite = grown(this.succSite, n * SLOTS, Number.NaN);
    this.succNode = grown(this.succNode, n * SLOTS, -1);
    this.succKind = grown(this.succKind, n * SLOTS);
    this.succVer = grown(this.succVer, n * SLOTS);
    this.nextSlot = grown(this.nextSlot, n);
  }

  /** Number of nodes in the CFG. */
  get nodes(): number {
    return this.size;
  }

  /** Site id of the loop head the last step belongs to, or -1 outside loops. */
  get currentHead(): number {
    return this.cur < 0 ? -1 : this.site[this.cur]!;
  }

  /** Whether samples or events wait to be drained. */
  get hasOutput(): boolean {
    return this.events.length !== 0 || this.samples.length !== 0;
  }

  /**
   * Adds MPI time (for callers that time overlapping calls once, at their settlement, and step
   * with tExit = tEntry).
   */
  addTime(dt: number): void {
    if (dt > 0) this.mpi += dt;
  }

  /** Changes the sampling interval; the running timer is restarted from `now`. */
  setInterval(interval: number, now: number): void {
    if (!(interval >= 0)) throw new RangeError(`interval: ${interval} is not >= 0`);
    this.interval = interval;
    this.nextSampleAt = now + interval;
  }

  /**
   * One communication call. Returns its `Kind`, with `STRUCTURAL` or-ed in when it changed the
   * CFG's structure. Never throws on any input.
   */
  step(site: number, type: OpType, tEntry: number, tExit: number): number {
    this.stepNo++;
    const p = this.prev;
    if (p >= 0) {
      let s = p * SLOTS;
      const end = s + SLOTS;
      while (s < end && this.succSite[s] !== site) s++;
      if (s < end && this.succVer[s] === this.version) {
        const n = this.succNode[s]!;
        const kind = this.succKind[s]!;
        // A known edge into a body node is a back edge (a new inner loop) if the node was already
        // visited since its loop's current pass began: that needs the slow path.
        if (kind !== Kind.InLoop || (this.flags[n]! & HEAD) !== 0 || this.lastStep[n]! < this.iterStart[this.headOf[n]!]!) {
          this.apply(n, kind, tEntry, tExit);
          return kind;
        }
      }
    }
    return this.slow(site, type, tEntry, tExit);
  }

  private apply(n: number, kind: number, t0: number, t1: number): void {
    this.visits[n]!++;
    const isHead = (this.flags[n]! & HEAD) !== 0;
    const h = isHead ? n : this.headOf[n]!;
    if (isHead) {
      if (t0 >= this.nextSampleAt) this.sample(n, t0);
      if (this.eventBits !== 0 && t0 >= this.nextEventAt) this.flush(t0);
      this.iterStart[n] = this.stepNo;
      this.tmtAtLast[n] = this.mpi - this.mpiAtDetect[n]!;
    } else if (h >= 0) {
      if (kind === Kind.BodyReentry) this.iterStart[h] = this.stepNo;
      else if (this.lastStep[h] === this.iterStart[h]) {
        this.offset[n]! += t0 - this.last[h]!;
        this.offsetN[n]!++;
      }
    }
    if (t1 > t0) this.mpi += t1 - t0;
    this.last[n] = t0;
    this.lastStep[n] = this.stepNo;
    this.tpos = (this.tpos + 1) & (TRAIL - 1);
    this.trail[this.tpos] = n;
    this.prev = n;
    this.cur = h;
  }

  private sample(h: number, t: number): void {
    const iterations = this.visits[h]! - this.sVisits[h]!;
    if (iterations <= 0) return;
    this.samples.push({
      head: this.site[h]!,
      time: t,
      visits: this.visits[h]!,
      created: this.created[h]!,
      last: t,
      tmt: this.mpi - this.mpiAtDetect[h]!,
      windowIterations: iterations,
      windowTime: t - this.sTime[h]!,
      windowMpi: this.mpi - this.sMpi[h]!,
    });
    this.sVisits[h] = this.visits[h]!;
    this.sTime[h] = t;
    this.sMpi[h] = this.mpi;
    this.nextSampleAt = t + this.interval;
  }

  private structural(bit: number, t: number): void {
    this.version = (this.version + 1) | 0 || 1;
    this.eventBits |= bit;
    this.eventCount++;
    if (t >= this.nextEventAt) this.flush(t);
  }

  private flush(t: number): void {
    this.events.push({ time: t, bits: this.eventBits, count: this.eventCount });
    this.eventBits = 0;
    this.eventCount = 0;
    this.nextEventAt = t + this.interval;
  }

  /** Is `x` inside the loop headed by `h` (itself, a body node, or in a loop nested in it)? */
  private inLoop(x: number, h: number): boolean {
    for (let d = 0; x >= 0 && d < MAX_DEPTH; d++) {
      if (x === h) return true;
      x = this.headOf[x]!;
    }
    return false;
  }

  private cache(p: number, site: number, n: number, kind: number): void {
    let s = p * SLOTS;
    const end = s + SLOTS;
    while (s < end && this.succSite[s] !== site) s++;
    if (s === end) {
      s = p * SLOTS + this.nextSlot[p]!;
      this.nextSlot[p] = (this.nextSlot[p]! + 1) % SLOTS;
    }
    this.succSite[s] = site;
    this.succNode[s] = n;
    this.succKind[s] = kind;
    this.succVer[s] = this.version;
  }

  private slow(site: number, type: OpType, t0: number, t1: number): number {
    const p = this.prev;
    let n = this.index.get(site);
    let kind: number;
    let changed = 0;
    if (n === undefined) {
      if (this.size >= this.capacity) {
        this.skipped++;
        if (t1 > t0) this.mpi += t1 - t0;
        this.tpos = (this.tpos + 1) & (TRAIL - 1);
        this.trail[this.tpos] = -1;
        this.prev = -1;
        this.cur = -1;
        return Kind.Skipped;
      }
      if (this.size === this.site.length) this.room(Math.min(this.capacity, this.size * 4));
      n = this.size++;
      this.index.set(site, n);
      this.site[n] = site;
      this.type[n] = type;
      this.created[n] = t0;
      this.lastStep[n] = -1;
      if (p >= 0) this.edges.add(p * 1048576 + n);
      const from = p < 0 ? -1 : (this.flags[p]! & HEAD) !== 0 ? p : this.headOf[p]!;
      kind = from >= 0 ? Kind.UnexpectedExit : Kind.Outside;
      if (from >= 0) changed = EventBit.unexpectedExit;
    } else {
      const key = p * 1048576 + n;
      const known = p >= 0 && this.edges.has(key);
      if (p >= 0 && !known) this.edges.add(key);
      const f = this.flags[n]!;
      if (p < 0) {
        kind = f & HEAD ? Kind.HeadReentry : f & BODY ? Kind.BodyReentry : Kind.Outside;
      } else if ((f & (HEAD | BODY)) === 0) {
        this.detect(n, p, t0);
        kind = Kind.LoopDetected;
        changed = EventBit.loopDetected;
      } else if (f & HEAD) {
        if (this.tailOf[n] === p || this.inLoop(p, n)) {
          kind = Kind.InLoop;
          if (!known) changed = EventBit.branch;
        } else {
          kind = Kind.HeadReentry;
          if (!known) {
            this.re[n]!++;
            this.reSrc[n] = p;
            changed = EventBit.headReentry;
          }
        }
      } else {
        const h = this.headOf[n]!;
        if (this.inLoop(p, h)) {
          if (this.lastStep[n]! >= this.iterStart[h]!) {
            this.detect(n, p, t0);
            kind = Kind.LoopDetected;
            changed = EventBit.loopDetected;
          } else {
            kind = Kind.InLoop;
            if (!known) changed = EventBit.branch;
          }
        } else {
          kind = Kind.BodyReentry;
          if (!known) {
            this.re[n]!++;
            this.reSrc[n] = p;
            changed = EventBit.bodyReentry;
          }
        }
      }
    }
    if (changed !== 0) this.structural(changed, t0);
    if (p >= 0 && kind !== Kind.LoopDetected && kind !== Kind.Outside && kind !== Kind.UnexpectedExit) this.cache(p, site, n, kind);
    this.apply(n, kind, t0, t1);
    return changed !== 0 ? kind | STRUCTURAL : kind;
  }

  /**
   * `n` was revisited from `p` inside its own context: it becomes the head of a loop with tail
   * `p`; the nodes visited since its previous visit that shared its context join the loop.
   */
  private detect(n: number, p: number, t: number): void {
    const ctx = (this.flags[n]! & BODY) !== 0 ? this.headOf[n]! : -1;
    this.flags[n]! |= HEAD;
    this.tailOf[n] = p;
    const from = this.lastStep[n]!;
    // trail[tpos] is the previous step (this one is not in yet).
    const count = Math.min(this.stepNo - 1 - from, TRAIL - 1);
    for (let k = 0; k < count; k++) {
      const x = this.trail[(this.tpos - k + TRAIL) & (TRAIL - 1)]!;
      if (x < 0 || x === n || this.headOf[x] !== ctx) continue;
      if (ctx < 0 && (this.flags[x]! & BODY) !== 0) continue;
      this.headOf[x] = n;
      this.flags[x]! |= BODY;
    }
    // The window of the loop's samples, and its TLT/TMT, start at its detection.
    this.detT[n] = t;
    this.detV[n] = this.visits[n]! + 1;
    this.sVisits[n] = this.visits[n]! + 1;
    this.sTime[n] = t;
    this.sMpi[n] = this.mpi;
    this.mpiAtDetect[n] = this.mpi;
    this.iterStart[n] = this.stepNo;
  }

  /** Samples taken since the last call, oldest first. */
  drainSamples(): CfgSample[] {
    const s = this.samples;
    if (s.length === 0) return s;
    this.samples = [];
    return s;
  }

  /** Structural-event reports since the last call (at most one per sampling interval). */
  drainEvents(): CfgEvent[] {
    const e = this.events;
    if (e.length === 0) return e;
    this.events = [];
    return e;
  }

  /** The CFG as rows (Listing 10.2), in creation order. */
  table(): CfgNodeRow[] {
    const rows: CfgNodeRow[] = [];
    const siteOr = (i: number) => (i < 0 ? null : this.site[i]!);
    for (let i = 0; i < this.size; i++) {
      const f = this.flags[i]!;
      rows.push({
        site: this.site[i]!,
        type: this.type[i]! as OpType,
        head: (f & HEAD) !== 0,
        body: (f & BODY) !== 0,
        re: this.re[i]!,
        rv: this.visits[i]! - 1,
        tail: f & HEAD ? siteOr(this.tailOf[i]!) : null,
        headOf: f & BODY ? siteOr(this.headOf[i]!) : null,
        reentrySource: siteOr(this.reSrc[i]!),
        created: this.created[i]!,
        last: this.last[i]!,
        detected: this.detT[i]!,
        detectedVisits: this.detV[i]!,
        tmt: f & HEAD ? this.mpi - this.mpiAtDetect[i]! : 0,
        tmtLast: this.tmtAtLast[i]!,
        offset: this.offset[i]!,
        offsetCount: this.offsetN[i]!,
      });
    }
    return rows;
  }
}

/** Listing 10.2's text form of a table. */
export function formatTable(rows: readonly CfgNodeRow[]): string {
  const s = (v: number | null) => (v === null ? "" : String(v));
  return rows
    .map(
      (r) =>
        `id: ${r.site}; H: ${r.head ? 1 : 0}; B: ${r.body ? 1 : 0}; Re: ${r.re}; Rv: ${r.rv}; ` +
        `tail: ${s(r.head ? r.tail : r.reentrySource)}; head: ${s(r.headOf)}`,
    )
    .join("\n");
}
