/**
 * Whether the controller's database can be written now: the one owner of that. A write that fails
 * for want of storage (disk full, read-only, I/O error) makes the store *degraded*, said once in
 * the log; from then on every write is refused at once with the reason (store/db.ts guards them:
 * the API answers 503, a launcher gets the same error), reads go on, and a probe each second
 * tries a small write, once the disk has MIN_FREE_BYTES free. When it succeeds, the writes kept
 * for later are made in the order they came, and the store is writable again (said once too).
 *
 *   what others report (a job's end from its agent or launcher, a node's registration): `orLater`,
 *     written now, or kept in memory until the store takes writes again
 *   what the controller decides itself (time limits, heartbeats, purges, scheduling): `quietly`,
 *     not taken while it cannot be recorded, taken again at the next tick
 *   what a client asks (submit, cancel, resize...): refused with StoreUnavailable, nothing kept
 *
 * What waits is bounded by what the controller holds already: one write per key (a job's end, a
 * node's row, a step's end), and no new job or step is made while the store is degraded.
 */
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { StoreUnavailable, storageFailure, type Db, type WriteGuard } from "../../store/db.ts";
import { logger } from "../../util/log.ts";

const log = logger("controller");

/** Free space the state dir's disk must have before writes resume (hysteresis: a disk just short of full would fail the next write). */
export const MIN_FREE_BYTES = 8 << 20;

const mib = (bytes: number) => (bytes / (1 << 20)).toFixed(1);

export class StoreHealth implements WriteGuard {
  private down: { error: StoreUnavailable; since: number } | undefined;
  /** The writes kept for later, by key, in the order they came. */
  private readonly waiting = new Map<string, () => void>();
  /** The waiting writes are being made: writes go through (and keep their order). */
  private draining = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Db,
    private readonly path: string,
    private readonly probeMs = 1000,
  ) {}

  get writable(): boolean {
    return this.down === undefined;
  }

  /** Why writes are refused, and since when (epoch ms); undefined while they are not. */
  get degraded(): { reason: string; since: number } | undefined {
    return this.down && { reason: this.down.error.message, since: this.down.since };
  }

  /** Writes kept in memory until the store takes writes again. */
  get deferred(): number {
    return this.waiting.size;
  }

  refusal(): StoreUnavailable | undefined {
    return this.draining ? undefined : this.down?.error;
  }

  failed(code: string, detail: string): StoreUnavailable {
    if (this.down) return this.down.error;
    const error = new StoreUnavailable(code, this.explain(code, detail));
    this.down = { error, since: Date.now() };
    log.error(`the store is read-only: ${error.message}. Writes are refused (HTTP 503) and nothing is scheduled; running jobs go on, and their ends are recorded once it is writable`, { code });
    this.timer = setInterval(() => this.probe(), this.probeMs);
    this.timer.unref?.();
    return error;
  }

  /** At start: degraded at once if the database cannot take a write (the free-space margin is for resuming only). */
  check(): void {
    this.tryWrite();
  }

  /**
   * A write that must be made (what an agent or a launcher reported): now, or, while the store
   * cannot take it, once it can again, in the order they came. A key's newest write replaces the
   * one waiting (a node's row, a program's state: the newest is what counts).
   */
  orLater(key: string, write: () => void): void {
    if (this.down) {
      this.waiting.delete(key);
      this.waiting.set(key, write);
      return;
    }
    try {
      write();
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
      this.waiting.set(key, write);
    }
  }

  /** A decision of the controller's own that is taken again later: not now if it cannot be recorded. */
  quietly(fn: () => void): void {
    if (this.down) return;
    try {
      fn();
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
    }
  }

  /** Tries to leave the degraded state: space, a write, then the waiting writes. True if writable. */
  probe(): boolean {
    if (!this.down) return true;
    const free = this.freeBytes();
    if (free !== undefined && free < MIN_FREE_BYTES) return false;
    this.draining = true;
    try {
      if (!this.tryWrite()) return false;
      for (const [key, write] of this.waiting) {
        try {
          write();
        } catch (e) {
          if (e instanceof StoreUnavailable) return false;
          log.error(`a write kept while the store was read-only failed; it is dropped`, { key, error: (e as Error).message });
        }
        this.waiting.delete(key);
      }
    } finally {
      this.draining = false;
    }
    const since = this.down.since;
    this.down = undefined;
    clearInterval(this.timer);
    this.timer = undefined;
    log.info(`the store is writable again after ${((Date.now() - since) / 1000).toFixed(1)} s; writes are accepted and scheduling resumes`);
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One small real write (the database header's user_version, rewritten as it is). */
  private tryWrite(): boolean {
    const sqlite = this.db.$client;
    try {
      const v = (sqlite.query("PRAGMA user_version").get() as { user_version: number }).user_version;
      sqlite.run(`PRAGMA user_version = ${v}`);
      return true;
    } catch (e) {
      const code = storageFailure(e);
      if (code === undefined) throw e;
      this.failed(code, (e as Error).message);
      return false;
    }
  }

  private freeBytes(): number | undefined {
    try {
      const s = statfsSync(dirname(this.path));
      return s.bavail * s.bsize;
    } catch {
      return undefined;
    }
  }

  private explain(code: string, detail: string): string {
    const dir = dirname(this.path);
    const free = this.freeBytes();
    if (code.startsWith("SQLITE_FULL") || (free !== undefined && free < MIN_FREE_BYTES))
      return `the disk of the state dir ${dir} is full (${free === undefined ? "?" : mib(free)} MiB free); free space there (it resumes by itself with ${mib(MIN_FREE_BYTES)} MiB free)`;
    if (code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN"))
      return `the database ${this.path} cannot be written (${code}: ${detail}); make it and ${dir} writable (remount read-write, or fix their owner and mode): it resumes by itself`;
    return `writing the database ${this.path} failed (${code}: ${detail}); check the disk of ${dir}: it resumes by itself once a write succeeds`;
  }
}
