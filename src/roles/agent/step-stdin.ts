/**
 * The launcher's standard input on one node: a pipe to each of the node's ranks that read it
 * (StepSpec.stdin), every piece written to all of them and acknowledged once each has taken it or
 * is gone, so that the launcher's window (docs/stdin.md) bounds what the node holds; a launcher
 * that does not keep to it loses its ranks' input. A rank that
 * closes its standard input or exits takes nothing more; the others go on.
 */
import type { FileSink } from "bun";
import { closeSync } from "node:fs";
import { STDIN_WINDOW } from "../../proto/step.ts";

export class StepStdin {
  private readonly pipes = new Map<number, FileSink>();
  /** Pieces written and not yet taken by every rank. */
  private inFlight = 0;

  /**
   * `ack(seq)`: piece `seq` is taken by every reading rank here. `overrun(why)`: a launcher that
   * ignores the window: the ranks' input ends, so that what the agent holds stays bounded.
   */
  constructor(
    private readonly ack: (seq: number) => void,
    private readonly overrun: (why: string) => void,
  ) {}

  /** The write end of rank `rank`'s standard input, which it was started with: the writer keeps its own copy (closed by its end), so `fd` is closed here. */
  add(rank: number, fd: number): void {
    try {
      this.pipes.set(rank, Bun.file(fd).writer());
    } finally {
      closeSync(fd);
    }
  }

  piece(seq: number, data: Uint8Array, eof: boolean): void {
    if (this.pipes.size > 0 && this.inFlight >= STDIN_WINDOW) {
      this.close();
      this.overrun(`more than ${STDIN_WINDOW} pieces of standard input unacknowledged; the ranks' standard input is closed`);
    }
    this.inFlight++;
    const writes = [...this.pipes].map(async ([rank, sink]) => {
      try {
        if (data.length > 0) {
          const wrote = sink.write(data);
          // Its failure is the flush's too; only the flush is awaited.
          if (wrote instanceof Promise) wrote.catch(() => {});
        }
        await sink.flush();
        if (eof) this.drop(rank);
      } catch {
        // EPIPE: the rank closed its standard input, or exited.
        this.drop(rank);
      }
    });
    void Promise.all(writes).then(() => {
      this.inFlight--;
      this.ack(seq);
    });
  }

  rankExited(rank: number): void {
    this.drop(rank);
  }

  close(): void {
    for (const rank of [...this.pipes.keys()]) this.drop(rank);
  }

  private drop(rank: number): void {
    const sink = this.pipes.get(rank);
    if (!sink) return;
    this.pipes.delete(rank);
    void Promise.resolve()
      .then(() => sink.end())
      .catch(() => {});
  }
}
