/**
 * The launcher's side of the output windows (docs/output.md): it acknowledges each child edge's
 * output once written, OUTPUT_ACK_EVERY characters at a time. Output the sink still holds (a
 * non-blocking stdout's stream buffer) is acknowledged only once the sink has drained it: a slow
 * reader holds the ranks back.
 */
import { OUTPUT_ACK_EVERY } from "../../proto/step.ts";
import type { PeerConn } from "../../tbon/pool.ts";

export class OutputAcks {
  private readonly unacked = new Map<PeerConn, number>();
  private waiting = false;

  constructor(
    private readonly step: string,
    /** Undefined when everything given to the sink is written; else resolves when it is. */
    private readonly drained: () => Promise<void> | undefined = () => undefined,
  ) {}

  /** The sink took `chars` characters of output that came up `via`. */
  written(chars: number, via: PeerConn): void {
    const total = (this.unacked.get(via) ?? 0) + chars;
    this.unacked.set(via, total);
    if (total >= OUTPUT_ACK_EVERY) this.flush();
  }

  private flush(): void {
    if (this.waiting) return;
    const wait = this.drained();
    if (wait) {
      this.waiting = true;
      void wait.then(() => {
        this.waiting = false;
        this.flush();
      });
      return;
    }
    for (const [via, chars] of this.unacked) {
      if (chars < OUTPUT_ACK_EVERY) continue;
      via.send({ t: "io.ack", step: this.step, chars });
      this.unacked.set(via, 0);
    }
  }
}
