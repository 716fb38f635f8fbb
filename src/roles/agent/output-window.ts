/**
 * How much output (its ranks' and its children's) a node may have sent up its edge and its parent
 * not yet acknowledged (docs/output.md). Each pump sends a piece, then waits here until the
 * parent's `io.ack`s bring what is outstanding under the window: meanwhile it does not read the
 * rank's pipe, so a rank whose launcher's output is slow blocks in write() as under a slow
 * terminal, and no socket queue along the tree grows past the window, nor drops what is over Bun's
 * limit.
 */
import { OUTPUT_WINDOW } from "../../proto/step.ts";

export class OutputWindow {
  private outstanding = 0;
  private waiters: (() => void)[] = [];
  private unbounded = false;

  constructor(readonly limit = OUTPUT_WINDOW) {}

  /** `chars` more were sent up. */
  sent(chars: number): void {
    this.outstanding += chars;
  }

  /** The launcher wrote `chars` of them. */
  acked(chars: number): void {
    this.outstanding = Math.max(0, this.outstanding - chars);
    this.wake();
  }

  /**
   * A new upstream (an adoption): what went to the old one will never be acknowledged; only
   * `resent` characters, held meanwhile and sent to the new one, are outstanding.
   */
  restart(resent: number): void {
    this.outstanding = resent;
    this.wake();
  }

  /** Nothing waits any more (the step is over here): the pumps read their pipes to the end. */
  open(): void {
    this.unbounded = true;
    this.wake();
  }

  /** Undefined while there is room; else resolves once there is. */
  room(): Promise<void> | undefined {
    if (this.unbounded || this.outstanding < this.limit) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    if (!this.unbounded && this.outstanding >= this.limit) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }
}
