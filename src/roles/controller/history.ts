/** Finished jobs are kept for `keepHistory` after they end (sacct's history), then purged with all their records. */
import type { JobStore } from "../../store/jobs.ts";
import { logger } from "../../util/log.ts";

const log = logger("controller");

export const DEFAULT_KEEP_HISTORY_MS = 30 * 86400_000;

/**
 * Purges now and then periodically (a quarter of the keep time, at most hourly); undefined if
 * history is kept forever. `guard` runs each purge (the controller's skips it while the store takes no writes).
 */
export function purgeHistory(store: JobStore, keepMs: number, guard: (fn: () => void) => void = (fn) => fn()): ReturnType<typeof setInterval> | undefined {
  if (!Number.isFinite(keepMs)) return undefined;
  const purge = () =>
    guard(() => {
      const n = store.purgeEnded(Date.now() - keepMs);
      if (n > 0) log.info(`purged ${n} jobs that ended more than ${Math.round(keepMs / 1000)} s ago`);
    });
  purge();
  const timer = setInterval(purge, Math.min(3600_000, Math.max(1000, keepMs / 4)));
  timer.unref?.();
  return timer;
}
