/** Where a step's output goes: the launcher's terminal (optionally labelled by rank) or a file. */
import { closeSync, constants, openSync, writeSync } from "node:fs";
import type { StepSink } from "./step-root.ts";
import { err, write } from "../../util/stdio.ts";

type Write = (fd: 1 | 2, text: string) => void;

/** Prefixes every line with "RANK: ", holding back partial lines until they end. */
class Labeller {
  private readonly partial = new Map<string, string>();

  constructor(private readonly write: Write) {}

  io(rank: number, fd: 1 | 2, data: string): void {
    const key = `${rank}:${fd}`;
    const text = (this.partial.get(key) ?? "") + data;
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      this.partial.set(key, text);
      return;
    }
    this.partial.set(key, text.slice(cut + 1));
    const lines = text.slice(0, cut).split("\n");
    this.write(fd, lines.map((l) => `${rank}: ${l}\n`).join(""));
  }

  flush(): void {
    for (const [key, rest] of this.partial) {
      if (!rest) continue;
      const [rank, fd] = key.split(":");
      this.write(Number(fd) as 1 | 2, `${rank}: ${rest}\n`);
    }
    this.partial.clear();
  }
}

export interface FlushableSink extends StepSink {
  flush(): void;
}

export function terminalSink(opts: { label: boolean; prog: string }): FlushableSink {
  const labeller = opts.label ? new Labeller(write) : undefined;
  return {
    io: (rank, fd, data) => (labeller ? labeller.io(rank, fd, data) : write(fd, data)),
    notice: (text) => err(`${opts.prog}: error: ${text}\n`),
    flush: () => labeller?.flush(),
  };
}

/**
 * Writes everything to a file, truncated first unless `append` (a command job's output, or a
 * step's of `ebb run -o`). Appending: the ranks on the sink's
 * node write to the same file themselves (StepSpec.outputFile). `openAs` opens the files with the
 * job's user's rights when an agent that runs as root hosts the sink.
 */
export function fileSink(path: string, opts: { label: boolean; error?: string; append?: boolean; openAs?: <T>(open: () => T) => T }): FlushableSink & { close(): void } {
  const as = opts.openAs ?? ((open) => open());
  const open = (p: string) => as(() => openSync(p, constants.O_WRONLY | constants.O_CREAT | (opts.append ? 0 : constants.O_TRUNC) | constants.O_APPEND, 0o644));
  const fd = open(path);
  const errFd = opts.error === undefined ? fd : open(opts.error);
  const append: Write = (f, text) => {
    writeSync(f === 2 ? errFd : fd, text);
  };
  const labeller = opts.label ? new Labeller(append) : undefined;
  return {
    io: (rank, f, data) => (labeller ? labeller.io(rank, f, data) : append(f, data)),
    notice: (text) => append(2, `ebb: error: ${text}\n`),
    flush: () => labeller?.flush(),
    close: () => {
      closeSync(fd);
      if (errFd !== fd) closeSync(errFd);
    },
  };
}
