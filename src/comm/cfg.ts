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
 * Output: when the detector has something to report (a sample, a structural event — at most once
 * per sampling interval) and when the program finalizes, the rank's table is written as JSON to
 * `EBB_CFG_FILE` (set by the agent), write-then-rename; the agent reads and reduces it.
 */
import { renameSync, writeFileSync } from "node:fs";
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
const origin = Date.now() - Bun.nanoseconds() / 1e6;

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

/** One public call, at its entry (ns, Bun.nanoseconds()). */
export function cfgStep(op: number, ctx: number, peer: number, tag: number, now: number): void {
  const d = detector;
  if (d === undefined) return;
  d.step(siteOf(op, ctx, peer, tag), op < COLL_FIRST ? OpType.P2p : OpType.Collective, now, now);
  if (d.hasOutput && !flushScheduled) {
    flushScheduled = true;
    setTimeout(writeCfg, 0);
  }
}

/** MPI time of the outermost call that just settled (overlapping calls count once). */
export function cfgTime(dt: number): void {
  detector?.addTime(dt);
}

/** Starts monitoring (from the agent's environment); returns whether it is on. */
export function startCfg(env: Record<string, string | undefined> = process.env): boolean {
  file = env.EBB_CFG_FILE;
  if (!file || detector) return detector !== undefined;
  rank = Number(env.EBB_PROCID ?? env.PMI_RANK ?? 0);
  const interval = Number(env.EBB_SAMPLE_INTERVAL ?? 60);
  detector = new Detector({ interval: (Number.isFinite(interval) && interval >= 0 ? interval : 60) * 1e9, start: Bun.nanoseconds() });
  return true;
}

/** Writes the rank's table now (at finalize, and when the detector reports). */
export function writeCfg(): void {
  flushScheduled = false;
  const d = detector;
  if (!d || !file) return;
  d.drainEvents();
  d.drainSamples();
  const body = JSON.stringify({ rank, origin, skipped: d.skipped, rows: d.table() });
  try {
    writeFileSync(`${file}.tmp`, body);
    renameSync(`${file}.tmp`, file);
  } catch {
    // The agent's directory is gone (the step is ending): nothing to report to.
  }
}

/** The process's detector (tests, diagnostics). */
export function cfgDetector(): Detector | undefined {
  return detector;
}
