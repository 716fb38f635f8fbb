/**
 * The pace of each user's ranks' PMI on this node (PMI_BYTES_PER_SECOND, PMI_BURST_BYTES at once,
 * all his steps together; a read costs pmi/socket.ts `readCost`): a rank flooding its PMI server
 * with requests, valid or not, is read no faster than that, so the
 * agent's thread, which serves every job's PMI on the node, stays free for the others. Nothing is
 * dropped: past the rate the agent reads no more of his connections until the rate has paid it
 * back, and says so (at most once every 10 s per user, naming the limit).
 */
import { ByteRate } from "../../util/byte-rate.ts";
import { logger } from "../../util/log.ts";
import { PMI_BURST_BYTES, PMI_BYTES_PER_SECOND, PMI_READ_COST, PMI_REQUEST_COST, type PmiPace } from "../../pmi/index.ts";

const log = logger("agent");

export class PmiPaces {
  /** One per user that ran a step here: as many as the node has users, each a few numbers. */
  private readonly users = new Map<string, { rate: ByteRate; warned: number }>();

  constructor(
    private readonly bytesPerSecond = PMI_BYTES_PER_SECOND,
    private readonly burst = PMI_BURST_BYTES,
  ) {}

  /** The pace of `user`'s ranks, for step `key`'s connections. */
  of(user: string, key: string): PmiPace {
    let u = this.users.get(user);
    if (!u) this.users.set(user, (u = { rate: new ByteRate(this.bytesPerSecond, this.burst, performance.now()), warned: -Infinity }));
    const own = u;
    return (cost) => {
      const now = performance.now();
      const wait = own.rate.take(cost, now);
      if (wait > 0 && now - own.warned >= 10_000) {
        own.warned = now;
        log.warn(`step ${key}: pausing PMI reads of ${user || "the agent's user"}'s ranks for ${wait} ms: they sent this node's PMI servers more than ${this.bytesPerSecond / 2 ** 20} MiB a second, ${this.burst / 2 ** 20} MiB at once (PMI_BYTES_PER_SECOND, PMI_BURST_BYTES; a read counts ${PMI_READ_COST} bytes more, a request ${PMI_REQUEST_COST})`);
      }
      return wait;
    };
  }
}
