/**
 * Where a step's output goes: the launcher's terminal or a file, a line at a time per rank (as
 * srun does: two ranks' lines never mix), optionally labelled by rank; or as it comes (unbuffered).
 */
import { closeSync, constants, openSync, writeSync } from "node:fs";
import type { StepSink } from "./step-root.ts";
import { err, write } from "../../util/stdio.ts";
import { openOutputFile } from "../output-open.ts";

type Write = (fd: 1 | 2, text: string) => void;

/** Writes each rank's output a whole line at a time, holding back partial lines until they end; with `label`, prefixed "RANK: ". */
class Lines {
  private readonly partial = new Map<string, string>();

  constructor(
    private readonly write: Write,
    private readonly label: boolean,
  ) {}

  io(rank: number, fd: 1 | 2, data: string): void {
    const key = `${rank}:${fd}`;
    const text = (this.partial.get(key) ?? "") + data;
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      this.partial.set(key, text);
      return;
    }
    this.partial.set(key, text.slice(cut + 1));
    this.write(fd, this.label ? `${text.slice(0, cut).split("\n").map((l) => `${rank}: ${l}\n`).join("")}` : text.slice(0, cut + 1));
  }

  /** What is left of unfinished lines (the step has ended). */
  flush(): void {
    for (const [key, rest] of this.partial) {
      if (!rest) continue;
      const [rank, fd] = key.split(":");
      this.write(Number(fd) as 1 | 2, this.label ? `${rank}: ${rest}\n` : rest);
    }
    this.partial.clear();
  }
}

/** Output in whole lines per rank (labelled or not), or as it comes. */
const lineWriter = (write: Write, opts: { label: boolean; unbuffered?: boolean }): Lines | undefined => (opts.label || !opts.unbuffered ? new Lines(write, opts.label) : undefined);

export interface FlushableSink extends StepSink {
  flush(): void;
}

export function terminalSink(opts: { label: boolean; unbuffered?: boolean; prog: string }): FlushableSink {
  const lines = lineWriter(write, opts);
  return {
    io: (rank, fd, data) => (lines ? lines.io(rank, fd, data) : write(fd, data)),
    notice: (text) => err(`${opts.prog}: error: ${text}\n`),
    flush: () => lines?.flush(),
  };
}

/**
 * Writes everything to a file, truncated first unless `append` (a command job's output, or a
 * step's of `ebb run -o`). Appending: the ranks on the sink's
 * node write to the same file themselves (StepSpec.outputFile). `openAs` opens the files with the
 * job's user's rights when an agent that runs as root hosts the sink; `mode`, a created file's
 * permissions (default 0644), the job's umask applied.
 */
export function fileSink(path: string, opts: { label: boolean; unbuffered?: boolean; error?: string; append?: boolean; mode?: number; openAs?: <T>(open: () => T) => T }): FlushableSink & { close(): void } {
  const flags = constants.O_WRONLY | constants.O_CREAT | (opts.append ? 0 : constants.O_TRUNC) | constants.O_APPEND;
  // An agent hosting the sink must not wait on what the user put at the path; `ebb run`'s own may.
  const open = (p: string) => (opts.openAs ? opts.openAs(() => openOutputFile(p, flags, opts.mode)) : openSync(p, flags, opts.mode ?? 0o644));
  const fd = open(path);
  const errFd = opts.error === undefined ? fd : open(opts.error);
  const append: Write = (f, text) => {
    writeSync(f === 2 ? errFd : fd, text);
  };
  const lines = lineWriter(append, opts);
  return {
    io: (rank, f, data) => (lines ? lines.io(rank, f, data) : append(f, data)),
    notice: (text) => append(2, `ebb: error: ${text}\n`),
    flush: () => lines?.flush(),
    close: () => {
      closeSync(fd);
      if (errFd !== fd) closeSync(errFd);
    },
  };
}
