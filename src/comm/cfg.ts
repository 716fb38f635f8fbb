/**
 * CFG monitoring of a Bun program's comm calls (dissertation §10.2.1, see src/cfg/README.md).
 *
 * Every public comm call is one detector step. The call-site key is derived from what the call
 * already has — operation, communicator (its context id within the generation, so a site keeps
 * its id across adaptations), peer or root, tag — hashed to 32 bits: a handful of integer
 * multiplies, where a JavaScript stack capture costs microseconds. A program can name the next
 * call's site itself (`callSite(id)`, like the dissertation's MPI_T_set_call_site_identifier),
 * which tells apart two calls with equal arguments in different places.
 *
 * EPOP mode (§10.2.4, the dissertation's MPI_T_enable_EPOP_mode): runEpop turns it on before
 * initAdapt. The program's structure is known, so nothing is detected from call sites: comm calls
 * add their time only, and the driver makes each iteration of a phase one step at the phase's own
 * site (`epopSite(pc)`). Every phase that runs more than once is then a loop whose head is its
 * site, with its iteration time (TLT) and MPI time (TMT) measured here as before; the node and job
 * reductions and the scheduler's samples are unchanged.
 *
 * The detector's work is kept off the message's way: a call records its step (site, op, time) in a
 * log of typed arrays, as `cfgTime` records a settled call's time, and the log is fed to the
 * detector in order, so it sees exactly the calls it saw when it stepped in the call: while a
 * receive waits (the rings' polling passes that find nothing take one entry each, `cfgIdle`), when
 * the log is full, every LOG_DRAIN_MS, and before anything reads the detector (its table, an EPOP
 * phase). Stepping in the call cost ~25-35 ns a call, and a reply that came meanwhile waited for
 * it; the work is the same, it is done where the process has nothing else to do.
 *
 * Output: when the detector has something to report (a sample, a structural event — at most once
 * per sampling interval) and when the program finalizes, the rank's table is written as JSON to
 * `EBB_CFG_FILE` (set by the agent), write-then-rename; the agent reads and reduces it.
 */
import { fs } from "./lazy.ts";
import { Detector } from "../cfg/detector.ts";
import { OpType } from "../cfg/types.ts";

export const CallOp = {
  send: 1,
  recv: 2,
  barrier: 3,
  bcast: 4,
  reduce: 5,
  allreduce: 6,
  gather: 7,
  allgather: 8,
  scatter: 9,
  alltoall: 10,
  split: 11,
  dup: 12,
} as const;

const COLL_FIRST = CallOp.barrier;

let detector: Detector | undefined;
let file: string | undefined;
let rank = 0;
let named = -1;
let flushScheduled = false;
let epopMode = false;
const origin = Date.now() - Bun.nanoseconds() / 1e6;

/** Calls recorded and not yet fed, a ring of entries: site, CallOp (0: a settled call's MPI time) and time (or that MPI time). */
const LOG = 4096;
const LOG_DRAIN_MS = 100;
const logSite = new Float64Array(LOG);
const logOp = new Uint8Array(LOG);
const logT = new Float64Array(LOG);
let logHead = 0;
let logLen = 0;

function record(site: number, op: number, t: number): void {
  const i = (logHead + logLen) & (LOG - 1);
  logSite[i] = site;
  logOp[i] = op;
  logT[i] = t;
  if (++logLen === LOG) cfgDrain();
}

/** Feeds the detector the oldest `n` recorded calls. */
function feed(d: Detector, n: number): void {
  for (; n > 0; n--) {
    const i = logHead;
    logHead = (i + 1) & (LOG - 1);
    logLen--;
    const op = logOp[i]!;
    const t = logT[i]!;
    if (op === 0) d.addTime(t);
    else d.step(logSite[i]!, op < COLL_FIRST ? OpType.P2p : OpType.Collective, t, t);
  }
}

/** Feeds the detector every recorded call. */
export function cfgDrain(): void {
  const d = detector;
  if (d === undefined || logLen === 0) return;
  feed(d, logLen);
  flushSoon(d);
}

/** While something waits with nothing to read: one recorded call to the detector. */
export function cfgIdle(): void {
  if (logLen === 0) return;
  const d = detector!;
  feed(d, 1);
  flushSoon(d);
}

function mix(h: number, v: number): number {
  h = Math.imul(h ^ v, 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 0;
}

/** The site id of a call (or the caller-named one). */
export function siteOf(op: number, ctx: number, peer: number, tag: number): number {
  if (named >= 0) {
    const s = named;
    named = -1;
    return s;
  }
  return mix(mix(mix(mix(0x811c9dc5, op), ctx & 0xfffff), peer + 2), tag + 2);
}

/** Names the site of the next comm call (a non-negative integer below 2^32). */
export function callSite(id: number): void {
  if (!Number.isInteger(id) || id < 0 || id >= 2 ** 32) throw new RangeError(`call site ${id} must be an integer 0..2^32-1`);
  named = id + 2 ** 32; // apart from the derived (32-bit) ids
}

/** Whether a detector takes steps (the caller may skip reading the clock for one when not). */
export function cfgOn(): boolean {
  return detector !== undefined && !epopMode;
}

/** One public call, at its entry (ns, Bun.nanoseconds()). */
export function cfgStep(op: number, ctx: number, peer: number, tag: number, now: number): void {
  if (detector === undefined || epopMode) return;
  record(siteOf(op, ctx, peer, tag), op, now);
}

function flushSoon(d: Detector): void {
  if (d.hasOutput && !flushScheduled) {
    flushScheduled = true;
    setTimeout(writeCfg, 0);
  }
}

/** EPOP mode: call sites are not steps, the driver's phases are (before initAdapt). */
export function enableEpopMode(): void {
  epopMode = true;
}

/** The site of an EPOP phase: apart from derived (32-bit) and named (2^32 + id) sites. */
export function epopSite(pc: number): number {
  return 2 ** 33 + pc;
}

/** The phase of an EPOP site, or undefined for any other site. */
export function phaseOfSite(site: number): number | undefined {
  return site >= 2 ** 33 && site < 2 ** 33 + 2 ** 20 ? site - 2 ** 33 : undefined;
}

/** EPOP mode: one iteration of phase `pc` begins (every rank, before each exec). */
export function cfgPhase(pc: number, now = Bun.nanoseconds()): void {
  const d = detector;
  if (d === undefined || !epopMode) return;
  cfgDrain();
  d.step(epopSite(pc), OpType.Collective, now, now);
  flushSoon(d);
}

/** MPI time of the outermost call that just settled (overlapping calls count once). */
export function cfgTime(dt: number): void {
  if (detector !== undefined && dt > 0) record(0, 0, dt);
}

/** Starts monitoring (from the agent's environment); returns whether it is on. */
export function startCfg(env: Record<string, string | undefined> = process.env): boolean {
  file = env.EBB_CFG_FILE;
  if (!file || detector) return detector !== undefined;
  rank = Number(env.EBB_PROCID ?? env.PMI_RANK ?? 0);
  const interval = Number(env.EBB_SAMPLE_INTERVAL ?? 60);
  detector = new Detector({ interval: (Number.isFinite(interval) && interval >= 0 ? interval : 60) * 1e9, start: Bun.nanoseconds() });
  setInterval(cfgDrain, LOG_DRAIN_MS).unref();
  return true;
}

/** Writes the rank's table now (at finalize, and when the detector reports). */
export function writeCfg(): void {
  flushScheduled = false;
  const d = detector;
  if (!d || !file) return;
  feed(d, logLen);
  d.drainEvents();
  d.drainSamples();
  const body = JSON.stringify({ rank, origin, skipped: d.skipped, rows: d.table() });
  try {
    fs().writeFileSync(`${file}.tmp`, body);
    fs().renameSync(`${file}.tmp`, file);
  } catch {
    // The agent's directory is gone (the step is ending): nothing to report to.
  }
}

/** The process's detector (tests, diagnostics). */
export function cfgDetector(): Detector | undefined {
  cfgDrain();
  return detector;
}
