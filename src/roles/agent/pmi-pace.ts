/**
 * The pace of each user's ranks' PMI on this node (PMI_BYTES_PER_SECOND, PMI_BURST_BYTES at once,
 * all his steps together; a read costs pmi/socket.ts `readCost`): a rank flooding its PMI server
 * with requests, valid or not, is read no faster than that, so the
 * agent's thread, which serves every job's PMI on the node, stays free for the others. Nothing is
 * dropped: past the rate the agent reads no more of his connections until the rate has paid it
 * back, and says so (at most once every 10 s per user, naming the limit). The pace protects the
 * node's other users, so it holds only while one of them has a job on the node: a user alone there
 * (a large job's wire-up, an all-to-all's business cards) is read as fast as he sends.
 */
import { ByteRate } from "../../util/byte-rate.ts";
import { logger } from "../../util/log.ts";
import { PMI_BURST_BYTES, PMI_BYTES_PER_SECOND, PMI_READ_COST, PMI_REQUEST_COST, type PmiPace } from "../../pmi/index.ts";

const log = logger("agent");

export class PmiPaces {
  /** One per user that ran a step here: as many as the node has users, each a few numbers. */
  private readonly users = new Map<string, { rate: ByteRate; warned: number; toldAlone: number }>();

  constructor(
    /** Whether a job of another user than this one is on the node. */
    private readonly shared: (user: string) => boolean,
    private readonly bytesPerSecond = PMI_BYTES_PER_SECOND,
    private readonly burst = PMI_BURST_BYTES,
  ) {}

  /** The pace of `user`'s ranks, for step `key`'s connections. */
  of(user: string, key: string): PmiPace {
    let u = this.users.get(user);
    if (!u) this.users.set(user, (u = { rate: new ByteRate(this.bytesPerSecond, this.burst, performance.now()), warned: -Infinity, toldAlone: -Infinity }));
    const own = u;
    return (cost) => {
      const now = performance.now();
      const wait = own.rate.take(cost, now);
      if (wait === 0) return 0;
      const who = user || "the agent's user";
      if (!this.shared(user)) {
        own.rate.forgive();
        if (now - own.toldAlone >= 10_000) {
          own.toldAlone = now;
          log.info(`step ${key}: ${who}'s ranks send this node's PMI servers more than ${this.bytesPerSecond / 2 ** 20} MiB a second; read on, as no other user has a job here (PMI_BYTES_PER_SECOND)`);
        }
        return 0;
      }
      if (now - own.warned >= 10_000) {
        own.warned = now;
        log.warn(`step ${key}: pausing PMI reads of ${who}'s ranks for ${wait} ms: they sent this node's PMI servers more than ${this.bytesPerSecond / 2 ** 20} MiB a second, ${this.burst / 2 ** 20} MiB at once (PMI_BYTES_PER_SECOND, PMI_BURST_BYTES; a read counts ${PMI_READ_COST} bytes more, a request ${PMI_REQUEST_COST})`);
      }
      return wait;
    };
  }
}
