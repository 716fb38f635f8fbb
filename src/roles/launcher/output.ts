/**
 * Where a step's output goes: the launcher's terminal or a file, a line at a time per rank (as
 * srun does: two ranks' lines never mix), optionally labelled by rank; or as it comes (unbuffered).
 */
import { closeSync, constants, openSync, writeSync } from "node:fs";
import type { StepSink } from "./step-root.ts";
import { drained, err, write } from "../../util/stdio.ts";

type Write = (fd: 1 | 2, text: string, rank: number) => void;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * The most of one unfinished line a rank's stream holds (UTF-16 units). A rank that writes more
 * without a newline has it written in pieces of this size, as Slurm's stepd splits a line longer
 * than its buffer: memory stays bounded whatever the rank writes, and nothing is lost. Unlabelled,
 * a piece is written as it is (the bytes are the rank's); labelled, each piece is a labelled line.
 */
export const LINE_HELD_MAX = 64 << 10;

/** Writes each rank's output a whole line at a time, holding back partial lines (up to LINE_HELD_MAX) until they end; with `label`, prefixed "RANK: ". */
class Lines {
  private readonly partial = new Map<string, string>();

  constructor(
    private readonly write: Write,
    private readonly label: boolean,
  ) {}

  io(rank: number, fd: 1 | 2, data: string): void {
    const key = `${rank}:${fd}`;
    const held = this.partial.get(key) ?? "";
    // Only the new data is searched: a long unfinished line is not scanned again on every chunk.
    const cut = data.lastIndexOf("\n");
    if (cut >= 0) {
      const text = held + data.slice(0, cut + 1);
      this.write(fd, this.label ? `${text.slice(0, -1).split("\n").map((l) => `${rank}: ${l}\n`).join("")}` : text, rank);
    }
    let rest = cut >= 0 ? data.slice(cut + 1) : held + data;
    while (rest.length >= LINE_HELD_MAX) {
      // Never between the two halves of a surrogate pair: each half alone would be written as U+FFFD.
      const at = isHighSurrogate(rest.charCodeAt(LINE_HELD_MAX - 1)) ? LINE_HELD_MAX - 1 : LINE_HELD_MAX;
      this.piece(rank, fd, rest.slice(0, at));
      rest = rest.slice(at);
    }
    if (rest) this.partial.set(key, rest);
    else this.partial.delete(key);
  }

  private piece(rank: number, fd: 1 | 2, text: string): void {
    this.write(fd, this.label ? `${rank}: ${text}\n` : text, rank);
  }

  /** What is left of unfinished lines (the step has ended). */
  flush(): void {
    for (const [key, rest] of this.partial) {
      const [rank, fd] = key.split(":");
      this.piece(Number(rank), Number(fd) as 1 | 2, rest);
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
  return {
    ...lineSink((fd, text) => write(fd, text), opts),
    drained: () => drained(1) ?? drained(2),
    notice: (text) => err(`${opts.prog}: error: ${text}\n`),
  };
}

/** Each rank's output handed to `write` a whole line at a time (labelled or not), or as it comes (`unbuffered`); `notice`s to its stderr. */
export function lineSink(write: (fd: 1 | 2, text: string) => void, opts: { label: boolean; unbuffered?: boolean } = { label: false }): Omit<FlushableSink, "drained"> {
  const lines = lineWriter((fd, text) => write(fd, text), opts);
  return {
    io: (rank, fd, data) => (lines ? lines.io(rank, fd, data) : write(fd, data)),
    notice: (text) => write(2, `ebb: error: ${text}\n`),
    flush: () => lines?.flush(),
  };
}

/**
 * Writes everything to a file, truncated first unless `append` (a command job's output, or a
 * step's of `ebb run -o`). Appending: the ranks on the sink's
 * node write to the same file themselves (StepSpec.outputFile). `mode`, a created file's
 * permissions (default 0644), the job's umask applied. (An agent's sink is a process of the
 * job's user: agent/user-file-sink.ts.)
 */
export function fileSink(path: string, opts: { label: boolean; unbuffered?: boolean; error?: string; append?: boolean; mode?: number }): FlushableSink & { close(): void } {
  const error = opts.error;
  return rankFileSink(() => path, error === undefined ? undefined : () => error, 1, opts);
}

/**
 * Each rank's output in the file `out(rank)` names, its errors in `err(rank)`'s (else with its
 * output), as srun's `-o out-%t` (a file per task) or `-o out-%n` (per node) writes them: every
 * file of ranks 0 to `ranks - 1` is made at the start (a rank that prints nothing leaves an
 * empty one, as under Slurm), a file several ranks share is opened once.
 */
export function rankFileSink(
  out: (rank: number) => string,
  err: ((rank: number) => string) | undefined,
  ranks: number,
  opts: { label: boolean; unbuffered?: boolean; append?: boolean; mode?: number },
): FlushableSink & { close(): void } {
  const flags = constants.O_WRONLY | constants.O_CREAT | (opts.append ? 0 : constants.O_TRUNC) | constants.O_APPEND;
  const fds = new Map<string, number>();
  const open = (p: string): number => {
    let fd = fds.get(p);
    if (fd === undefined) fds.set(p, (fd = openSync(p, flags, opts.mode ?? 0o644)));
    return fd;
  };
  const fdOf = (f: 1 | 2, rank: number) => open(f === 2 && err ? err(rank) : out(rank));
  try {
    for (let r = 0; r < ranks; r++) {
      fdOf(1, r);
      fdOf(2, r);
    }
  } catch (e) {
    for (const fd of fds.values()) closeSync(fd);
    throw e;
  }
  const append: Write = (f, text, rank) => {
    writeSync(fdOf(f, rank), text);
  };
  const lines = lineWriter(append, opts);
  return {
    io: (rank, f, data) => (lines ? lines.io(rank, f, data) : append(f, data, rank)),
    notice: (text) => append(2, `ebb: error: ${text}\n`, 0),
    flush: () => lines?.flush(),
    close: () => {
      for (const fd of fds.values()) closeSync(fd);
    },
  };
}
