/** Jobs' CFG monitoring state, one JSON document per job (the controller validates what it reads). */
import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { jobCfgs } from "./schema.ts";

export class CfgStore {
  constructor(private readonly db: Db) {}

  save(jobId: number, data: unknown, now = Date.now()): void {
    this.db
      .insert(jobCfgs)
      .values({ jobId, data, updatedAt: now })
      .onConflictDoUpdate({ target: jobCfgs.jobId, set: { data, updatedAt: now } })
      .run();
  }

  all(): Array<{ jobId: number; data: unknown }> {
    return this.db.select({ jobId: jobCfgs.jobId, data: jobCfgs.data }).from(jobCfgs).all();
  }

  delete(jobId: number): void {
    this.db.delete(jobCfgs).where(eq(jobCfgs.jobId, jobId)).run();
  }
}
