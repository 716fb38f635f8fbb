/** Adaptation records and timing samples of elastic jobs. */
import { and, asc, eq, gte, lt } from "drizzle-orm";
import type { Db } from "./db.ts";
import { adaptations, perfSamples } from "./schema.ts";

export type AdaptationRow = typeof adaptations.$inferSelect;
export type PerfRow = typeof perfSamples.$inferSelect;

export class ElasticStore {
  constructor(private readonly db: Db) {}

  insertAdaptation(row: Omit<typeof adaptations.$inferInsert, "id">): number {
    return this.db.insert(adaptations).values(row).returning({ id: adaptations.id }).get().id;
  }

  endAdaptation(id: number, patch: { state: "COMMITTED" | "FAILED"; endedAt: number; message?: string | null; times: Record<string, number>; stepId?: number | null }): void {
    this.db.update(adaptations).set(patch).where(eq(adaptations.id, id)).run();
  }

  /** A fault adaptation that loses one more node before its window opens. */
  extendFault(id: number, patch: { toNodes: number; toRanks: number; removed: string[] }): void {
    this.db.update(adaptations).set(patch).where(eq(adaptations.id, id)).run();
  }

  adaptationsOf(jobId: number): AdaptationRow[] {
    return this.db.select().from(adaptations).where(eq(adaptations.jobId, jobId)).orderBy(asc(adaptations.id)).all();
  }

  /** Adaptations still open (after a controller restart they are failed: their launcher is gone or will re-report). */
  /** A checkpoint-restart adaptation's world restarts in `stepId` (kept for a controller restart). */
  setRestartStep(id: number, stepId: number): void {
    this.db.update(adaptations).set({ restartStep: stepId }).where(eq(adaptations.id, id)).run();
  }

  openAdaptations(): AdaptationRow[] {
    return this.db.select().from(adaptations).where(eq(adaptations.state, "ADAPTING")).all();
  }

  insertPerf(row: Omit<typeof perfSamples.$inferInsert, "id">): void {
    this.db.insert(perfSamples).values(row).run();
  }

  /** A job's probe timings from `since` on, before `before` if given. */
  perfSince(jobId: number, since: number, before?: number): PerfRow[] {
    return this.db
      .select()
      .from(perfSamples)
      .where(and(eq(perfSamples.jobId, jobId), gte(perfSamples.time, since), before === undefined ? undefined : lt(perfSamples.time, before)))
      .orderBy(asc(perfSamples.time))
      .all();
  }
}
