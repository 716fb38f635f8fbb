/**
 * The agent's record of the process groups it started, so that a restarted agent can kill what its
 * previous life left running. One line per group, appended as it starts: `PGID JOBID START\n`,
 * START being the leader's start time (clock ticks since boot, /proc/PID/stat field 22), which
 * guards against pid reuse. An append costs one write whatever the number of groups (rewriting the
 * whole record cost one per group, at every spawn), and an agent killed in the middle of one can
 * leave only a torn last line, which is skipped. Groups that end stay in the file until it is
 * compacted; their leaders' start times no longer match, so they are never killed by mistake.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync, constants } from "node:fs";

export interface GroupRecord {
  jobId: number;
  start: string;
  /** The agent has reaped the leader (not recorded: a restarted agent checks START). */
  leaderReaped?: boolean;
}

const LINE = /^(\d+) (\d+) (\d+)$/;

export function formatGroup(pgid: number, rec: GroupRecord): string {
  return `${pgid} ${rec.jobId} ${rec.start}\n`;
}

/**
 * The groups a record holds; later lines win. A line without its newline (a torn last write) or
 * not of this format is skipped.
 */
export function parseGroups(text: string): Map<number, GroupRecord> {
  const groups = new Map<number, GroupRecord>();
  const lines = text.split("\n");
  lines.pop();
  for (const line of lines) {
    const m = LINE.exec(line);
    if (m) groups.set(Number(m[1]), { jobId: Number(m[2]), start: m[3]! });
  }
  return groups;
}

/** The record of ebb 0.1.0 before this format: one JSON object, rewritten at every spawn. */
function parseLegacy(path: string): Map<number, GroupRecord> {
  if (!existsSync(path)) return new Map();
  const recorded = JSON.parse(readFileSync(path, "utf8")) as Record<string, GroupRecord>;
  return new Map(Object.entries(recorded).map(([pgid, rec]) => [Number(pgid), rec]));
}

export class GroupLog {
  private lines = 0;

  constructor(
    private readonly path: string,
    private readonly legacyPath?: string,
  ) {}

  /** What the previous life recorded (read once, before the first append). */
  read(): Map<number, GroupRecord> {
    const groups = this.legacyPath ? parseLegacy(this.legacyPath) : new Map<number, GroupRecord>();
    if (existsSync(this.path)) for (const [pgid, rec] of parseGroups(readFileSync(this.path, "utf8"))) groups.set(pgid, rec);
    return groups;
  }

  /**
   * Opened for each line, not held: every descriptor the process holds is copied into each child it
   * spawns and closed again at the child's exec, and `ebb up`'s thousand agents share one process
   * (an open and a close, ~10 µs, against ~0.2 µs for each of a thousand held files at every spawn).
   */
  append(pgid: number, rec: GroupRecord): void {
    const fd = openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    try {
      writeSync(fd, formatGroup(pgid, rec));
    } finally {
      closeSync(fd);
    }
    this.lines++;
  }

  /** Lines written since the record last held only `groups`. */
  get length(): number {
    return this.lines;
  }

  /** Replace the record by `groups` (written aside, then renamed over it: never half a record). */
  rewrite(groups: ReadonlyMap<number, GroupRecord>): void {
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, [...groups].map(([pgid, rec]) => formatGroup(pgid, rec)).join(""), { mode: 0o600 });
    renameSync(tmp, this.path);
    if (this.legacyPath) rmSync(this.legacyPath, { force: true });
    this.lines = groups.size;
  }
}
