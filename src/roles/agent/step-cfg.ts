/**
 * One node's part of a step's CFG monitoring (dissertation §10.2.2). Each local rank writes its
 * table to its own file in a per-step directory of node-shared memory (`EBB_CFG_FILE`, written
 * then renamed by ebb/comm); the agent reads them about once per sampling interval and when the
 * local ranks have all ended, reduces them (src/cfg/node.ts) and sends the node's CFG to the
 * controller.
 */
import { mkdirSync } from "node:fs";
import { readRegularFile, removeBeneath } from "./user-files.ts";
import { join } from "node:path";
import type { NodeCfg } from "../../cfg/node.ts";
import { reduceNode, type RankCfg } from "../../cfg/node.ts";
import { RankCfgFile } from "../../proto/cfg.ts";
import type { StepSpec } from "../../proto/step.ts";
import { logger } from "../../util/log.ts";
import { JsonTooDeep, parseJson } from "../../util/json.ts";
import { randomTag } from "./shm-sweep.ts";

const log = logger("cfg");

/** The largest rank table read (a real one is some KiB: a row per MPI call site); a larger file is skipped and said once. */
export const CFG_FILE_MAX_BYTES = 16 << 20;

export interface StepCfgContext {
  node: string;
  spec: StepSpec;
  /** World ranks on this node. */
  ranks: number[];
  ntasks: number;
  shmDir: string;
  /** Runs `fn` with the job's user's rights (the agent runs as root), so the directory is theirs. */
  openAs<T>(fn: () => T): T;
  /** Seconds between reads (the job's sampling interval). */
  interval: number;
  send(cfg: NodeCfg, final: boolean, monitor?: string): void;
}

export class StepCfg {
  /** The directory's name in the shared memory directory, and its path. */
  private readonly name: string;
  private readonly dir: string;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The directory is there: made (`make`) and not yet removed (at the final report). */
  private made = false;
  private readonly ended = new Set<number>();
  private sentFinal = false;
  private reason: string | undefined;
  /** Ranks whose table was skipped and said so (once each). */
  private readonly skipped = new Set<number>();

  constructor(private readonly c: StepCfgContext) {
    this.name = `ebb-cfg-${c.node}-${c.spec.jobId}.${c.spec.stepId}.${randomTag()}-${process.pid}`;
    this.dir = join(c.shmDir, this.name);
  }

  /**
   * Makes the ranks' directory, just before they start, with the job's user's rights already in
   * force: the caller's one switch to them for the step's directory check, program look and output
   * files (steps.ts; a switch of its own before, and none for a node without ranks). Not recursive
   * and with a random part: a name planted in the shared directory fails the mkdir instead of being
   * used, and cannot be guessed ahead. One that fails leaves the ranks unmonitored, saying why.
   */
  make(): void {
    try {
      mkdirSync(this.dir, { mode: 0o700 });
    } catch (e) {
      return this.unmonitored(`cannot make the CFG directory ${this.dir}: ${(e as Error).message}`);
    }
    this.made = true;
    this.timer = setInterval(() => this.report(false), Math.max(100, this.c.interval * 1000));
    this.timer.unref?.();
  }

  env(rank: number): Record<string, string> {
    return { EBB_CFG_FILE: join(this.dir, `rank-${rank}.json`), EBB_SAMPLE_INTERVAL: String(this.c.interval) };
  }

  /** The ranks run without monitoring (no library for an MPI program): say why, once. */
  unmonitored(reason: string): void {
    this.reason = reason;
    this.c.send({ loops: [] }, false, reason);
  }

  /** A local rank's process ended; after the last one, the final report. */
  rankEnded(rank: number): void {
    this.ended.add(rank);
    if (this.c.ranks.every((r) => this.ended.has(r))) this.report(true);
  }

  /** The tables of the local ranks that wrote one, validated. */
  read(): RankCfg[] {
    const out: RankCfg[] = [];
    for (const rank of this.c.ranks) {
      const f = `rank-${rank}.json`;
      const text = this.readTable(rank, f);
      if (text === undefined) continue;
      try {
        const parsed = RankCfgFile.safeParse(parseJson(text));
        if (parsed.success) out.push(parsed.data as RankCfg);
        else log.warn(`cfg: ${f} of step ${this.c.spec.jobId}.${this.c.spec.stepId}: ${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message}`);
      } catch (e) {
        // Being replaced right now, or not JSON: the next read gets it. Too deep is said once per rank.
        if (e instanceof JsonTooDeep && !this.skipped.has(rank)) {
          this.skipped.add(rank);
          log.warn(`cfg: ${f} of step ${this.c.spec.jobId}.${this.c.spec.stepId}: ${e.message}; not read`);
        }
      }
    }
    return out;
  }

  /**
   * A rank's table (`file` in the directory), read as the job's user (the directory is theirs) if it
   * is a regular file of at most CFG_FILE_MAX_BYTES: not a link, a FIFO, or a mount a rank put there
   * (said once per rank; user-files.ts).
   */
  private readTable(rank: number, file: string): string | undefined {
    try {
      return this.c.openAs(() => readRegularFile(this.c.shmDir, `${this.name}/${file}`, CFG_FILE_MAX_BYTES, "CFG_FILE_MAX_BYTES"));
    } catch (e) {
      if (!this.skipped.has(rank)) {
        this.skipped.add(rank);
        log.warn(`cfg: rank ${rank} of step ${this.c.spec.jobId}.${this.c.spec.stepId}: its table ${(e as Error).message}; skipped`);
      }
      return undefined;
    }
  }

  /**
   * Reads and reduces the tables; the final report (the local ranks have all ended, or the step)
   * also removes the directory, which nothing reads after it: one switch to the job's user for both.
   */
  private report(final: boolean): void {
    if (this.sentFinal) return;
    if (final) this.sentFinal = true;
    const tables = !this.made
      ? []
      : this.c.openAs(() => {
          const read = this.read();
          if (final) this.remove();
          return read;
        });
    if (tables.length === 0 && !final) return;
    this.c.send(reduceNode(tables), final, this.reason);
  }

  /** Most steps' ranks wrote nothing here (neither MPI nor ebb/comm): one rmdir, else its files first. What cannot go (a mount of the user's) is left, and said. */
  private remove(): void {
    this.made = false;
    clearInterval(this.timer);
    try {
      removeBeneath(this.c.shmDir, this.name);
    } catch (e) {
      log.warn(`cfg: the CFG directory of step ${this.c.spec.jobId}.${this.c.spec.stepId} is left: ${(e as Error).message}`);
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.report(true);
  }
}
