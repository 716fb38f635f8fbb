/**
 * A child's up-messages on their way through this node (docs/output.md). The child's output goes
 * up only when this node's own window has room; what waits is held here, in order, and so are the
 * child's later messages (an exit must not overtake its rank's last output). The child's window
 * bounds what waits; this node acknowledges the child's output as it sends it up.
 */
import { OUTPUT_ACK_EVERY, type StepUp } from "../../proto/step.ts";
import type { OutputWindow } from "./output-window.ts";

export class OutputRelay {
  private readonly queue: StepUp[] = [];
  private owed = 0;
  private waiting = false;

  constructor(
    private readonly window: OutputWindow,
    /** What to do with a message once its turn comes (io: send it up). */
    private readonly handle: (msg: StepUp) => void,
    /** Tell the child that `chars` more of its output went up. */
    private readonly ack: (chars: number) => void,
  ) {}

  take(msg: StepUp): void {
    this.queue.push(msg);
    if (this.queue.length === 1) this.drain();
  }

  private drain(): void {
    while (this.queue.length > 0) {
      const msg = this.queue[0]!;
      if (msg.t === "io") {
        const wait = this.window.room();
        if (wait) {
          if (!this.waiting) {
            this.waiting = true;
            void wait.then(() => {
              this.waiting = false;
              this.drain();
            });
          }
          return;
        }
        this.window.sent(msg.data.length);
        this.owed += msg.data.length;
      }
      this.queue.shift();
      this.handle(msg);
      if (this.owed >= OUTPUT_ACK_EVERY) {
        this.ack(this.owed);
        this.owed = 0;
      }
    }
  }
}
