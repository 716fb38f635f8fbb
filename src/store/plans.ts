/** Scheduling plans as committed by the controller's plan applier (one row per pass that planned anything). */
import { asc, gte } from "drizzle-orm";
import type { Db } from "./db.ts";
import { plans } from "./schema.ts";

export type PlanRow = typeof plans.$inferSelect;

export class PlanStore {
  constructor(private readonly db: Db) {}

  insert(row: Omit<typeof plans.$inferInsert, "id">): number {
    return this.db.insert(plans).values(row).returning({ id: plans.id }).get().id;
  }

  since(time: number): PlanRow[] {
    return this.db.select().from(plans).where(gte(plans.time, time)).orderBy(asc(plans.id)).all();
  }
}
