/**
 * The launcher's side of the output windows (docs/output.md): it acknowledges each node's output
 * once written, OUTPUT_ACK_EVERY characters at a time, on the edge that output came up (the tree
 * routes the ack down to the node). Output the sink still holds (a non-blocking stdout's stream
 * buffer) is acknowledged only once the sink has drained it: a slow reader holds the ranks back.
 */
import { OUTPUT_ACK_EVERY } from "../../proto/step.ts";
import type { PeerConn } from "../../tbon/pool.ts";

export class OutputAcks {
  private readonly unacked = new Map<number, { chars: number; via: PeerConn }>();
  private waiting = false;

  constructor(
    private readonly step: string,
    /** Undefined when everything given to the sink is written; else resolves when it is. */
    private readonly drained: () => Promise<void> | undefined = () => undefined,
  ) {}

  /** The sink took `chars` characters of node `node`'s output, which came up `via`. */
  written(node: number, chars: number, via: PeerConn): void {
    const u = this.unacked.get(node);
    if (u) {
      u.chars += chars;
      u.via = via;
    } else this.unacked.set(node, { chars, via });
    if ((u?.chars ?? chars) >= OUTPUT_ACK_EVERY) this.flush();
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
    for (const [node, u] of this.unacked) {
      if (u.chars < OUTPUT_ACK_EVERY) continue;
      u.via.send({ t: "io.ack", step: this.step, node, chars: u.chars });
      u.chars = 0;
    }
  }
}
