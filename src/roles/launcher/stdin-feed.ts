/**
 * The launcher's standard input, fed to the step's ranks that read it (StepSpec.stdin) in pieces
 * of at most STDIN_CHUNK bytes, at most WINDOW pieces unacknowledged: what a slow reader leaves
 * waits in this process's pipe, not in the agents' memory. Reading stops when every reading rank
 * has exited (as mpiexec's does when rank 0 has). Protocol: docs/stdin.md.
 */
import { STDIN_CHUNK, STDIN_WINDOW, type StepDown } from "../../proto/step.ts";

export class StdinFeed {
  private seq = 0;
  /** Per piece in flight, the reading nodes that have not acknowledged it. */
  private readonly unacked = new Map<number, Set<number>>();
  /** Reading ranks not yet exited, by node index. */
  private readonly readers = new Map<number, Set<number>>();
  private wake: (() => void) | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private stopped = false;

  constructor(
    private readonly step: string,
    /** Reading ranks by node index (StepSpec.stdin on the step's layout). */
    readers: ReadonlyMap<number, readonly number[]>,
    private readonly send: (msg: Extract<StepDown, { t: "stdin" }>) => void,
  ) {
    for (const [node, ranks] of readers) this.readers.set(node, new Set(ranks));
  }

  /** Reads `source` to its end (or until stopped), sending it on; the end is sent as `eof`. */
  async run(source: ReadableStream<Uint8Array>): Promise<void> {
    if (this.readers.size === 0) return;
    try {
      this.reader = source.getReader();
      for (;;) {
        if (this.stopped) return;
        const { done, value } = await this.reader.read();
        if (done || this.stopped) break;
        for (let at = 0; at < value.length && !this.stopped; at += STDIN_CHUNK) await this.piece(value.subarray(at, at + STDIN_CHUNK), false);
      }
    } catch {
      // Unreadable (closed, or a descriptor that is not there): the ranks see the end.
    }
    if (!this.stopped) await this.piece(new Uint8Array(0), true);
  }

  acked(node: number, seq: number): void {
    const left = this.unacked.get(seq);
    if (!left?.delete(node) || left.size > 0) return;
    this.unacked.delete(seq);
    this.wakeUp();
  }

  /** A rank exited (or was lost): a node whose reading ranks are all gone acknowledges nothing more. */
  rankGone(node: number, rank: number): void {
    const ranks = this.readers.get(node);
    if (!ranks?.delete(rank) || ranks.size > 0) return;
    this.readers.delete(node);
    for (const seq of [...this.unacked.keys()]) this.acked(node, seq);
    if (this.readers.size === 0) this.stop();
  }

  /** The step is over, or nobody reads any more: no more reading. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeUp();
    void this.reader?.cancel().catch(() => {});
  }

  private async piece(data: Uint8Array, eof: boolean): Promise<void> {
    while (this.unacked.size >= STDIN_WINDOW && !this.stopped) await new Promise<void>((r) => (this.wake = r));
    if (this.stopped) return;
    const seq = this.seq++;
    this.unacked.set(seq, new Set(this.readers.keys()));
    this.send({ t: "stdin", step: this.step, seq, data: Buffer.from(data.buffer, data.byteOffset, data.length).toString("base64"), ...(eof ? { eof: true } : {}) });
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}
