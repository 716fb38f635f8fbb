/**
 * What EPOP programs tell the controller about themselves (src/epop/run.ts -> agent -> here): the
 * phase structure once, then the current program counter, the iteration of an elastic phase and
 * its bound. Kept with the running job (not stored: it is as old as the job's current run), shown
 * by `ebb show`, and turned into a remaining-time estimate for the scheduler: the rate of the
 * current bounded phase since it started, times the iterations left. The time limit still caps it.
 */
import { z } from "zod";
import type { JobRuntime } from "./state.ts";
import { parseJson } from "../../util/json.ts";

export const ProgramStructure = z.object({
  name: z.string().max(256),
  phases: z.array(z.object({ pc: z.int().nonnegative(), name: z.string().max(256), kind: z.enum(["init", "rigid", "elastic", "branch"]) })).max(1024),
});

export interface ProgramRuntime {
  structure?: z.infer<typeof ProgramStructure>;
  pc?: number;
  iteration?: number;
  bound?: number;
  /** When the current phase was first reported, and its iteration then (the rate's origin). */
  phaseSince?: number;
  phaseStartIteration?: number;
  updated?: number;
}

export interface ProgramMessage {
  structure?: string | undefined;
  pc?: number | undefined;
  iteration?: number | undefined;
  bound?: number | undefined;
}

/** What is stored with the job (jobs.program), so a controller restart keeps the progress. */
const Stored = z.object({
  structure: ProgramStructure.optional(),
  pc: z.int().optional(),
  iteration: z.number().optional(),
  bound: z.number().optional(),
  phaseSince: z.number().optional(),
  phaseStartIteration: z.number().optional(),
  updated: z.number().optional(),
});

/** A stored report back as the job's program state (anything malformed: none). */
export function restoreProgram(job: JobRuntime, stored: unknown, now = Date.now()): void {
  const s = Stored.safeParse(stored);
  if (!s.success) return;
  job.program = s.data;
  programReport(job, {}, now);
}

/** Applies a report; a structure that is not valid JSON of the right shape is ignored. */
export function programReport(job: JobRuntime, msg: ProgramMessage, now = Date.now()): void {
  const p = (job.program ??= {});
  if (msg.structure !== undefined) {
    try {
      const s = ProgramStructure.safeParse(parseJson(msg.structure));
      if (s.success) p.structure = s.data;
    } catch {
      // not JSON: ignored, like any malformed report from a rank
    }
  }
  if (msg.pc !== undefined) {
    if (msg.pc !== p.pc) {
      p.phaseSince = now;
      p.phaseStartIteration = msg.iteration ?? 0;
    }
    p.pc = msg.pc;
    p.iteration = msg.iteration;
    p.bound = msg.bound;
    p.updated = now;
  }
}

/** When the job is expected to end: its limit, or sooner when its EPOP program's progress says so. */
export function expectedEnd(job: JobRuntime, now: number): number {
  const limitEnd = (job.row.startTime ?? job.row.submitTime) + job.row.timeLimit * 1000;
  const left = job.program && remainingMs(job.program, now);
  return left === undefined ? limitEnd : Math.min(limitEnd, now + left);
}

/** A phase's progress is reported at the end of an iteration, at most once this often (epop/run.ts). */
const REPORT_EVERY_MS = 1000;

/**
 * Time left by the current bounded phase's rate, if it has one (ignores later phases): the rate as
 * of the last report, less the time since it. (Worked out from `now` instead, an estimate rose
 * between reports, most where few iterations were done: a job early in its phase looked as if it
 * had hundreds of seconds more to go a second after it looked nearly done.) A silence longer than
 * two reports' spacing means the iteration under way is slower than that rate: then the rate the
 * silence implies.
 */
export function remainingMs(p: ProgramRuntime, now = Date.now()): number | undefined {
  if (p.bound === undefined || p.iteration === undefined || p.phaseSince === undefined || p.phaseStartIteration === undefined) return undefined;
  const done = p.iteration - p.phaseStartIteration;
  const at = Math.min(now, p.updated ?? now);
  if (done <= 0 || at <= p.phaseSince) return undefined;
  const left = Math.max(0, p.bound - p.iteration);
  const rate = (at - p.phaseSince) / done;
  const silence = now - at;
  if (silence <= 2 * Math.max(REPORT_EVERY_MS, rate)) return Math.max(0, rate * left - silence);
  return ((now - p.phaseSince) / done) * left;
}
