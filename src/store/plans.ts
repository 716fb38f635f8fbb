/**
 * Scheduling plans as the controller's plan applier commits them: one `plans` row per pass that
 * planned anything, one `plan_items` row per spawn grant, start or resize, each with what became
 * of it. Who may read which items is given as a job filter (the jobs table's user and submitter).
 */
import { and, desc, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "./db.ts";
import { jobs, planItems, plans } from "./schema.ts";

export type PlanRow = typeof plans.$inferSelect;
export type PlanItemRow = typeof planItems.$inferSelect;
export type PlanItemStatus = PlanItemRow["status"];
export type NewPlanItem = Omit<typeof planItems.$inferInsert, "id" | "planId">;

/** Whose items a reader sees: all, a job token's (its job and the jobs it submitted), or a user's. */
export interface PlanReader {
  visibleTo?: number;
  owner?: string;
}

export interface PlanQuery extends PlanReader {
  /** Only plans with an item of this job (and only those items). */
  jobId?: number;
  /** The newest this many plans. */
  limit: number;
}

export class PlanStore {
  /** The writes of every pass, compiled once (building a drizzle query anew costs more than running it). */
  private readonly q;

  constructor(private readonly db: Db) {
    const p = sql.placeholder;
    const hole = (name: string) => sql.placeholder(name) as unknown as never;
    this.q = {
      // A plan (each pass that plans anything) and its items (one a start, so one a job): in SQL,
      // each id from the insert itself (drizzle's placeholders, mapping and RETURNING cost more
      // than the insert). `reservations` and `detail` are JSON, as drizzle wrote them.
      insertPlan: db.$client.prepare<unknown, [number, string, string]>(`INSERT INTO plans (time, policy, reservations) VALUES (?1, ?2, ?3)`),
      insertItem: db.$client.prepare<unknown, [number, number, string, string, string, string | null, string]>(
        `INSERT INTO plan_items (plan_id, job_id, kind, status, reason, outcome, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`,
      ),
      settle: db.update(planItems).set({ status: hole("status"), outcome: hole("outcome") }).where(eq(planItems.id, p("id"))).prepare(),
    };
  }

  /** The plan's row and its items (call inside a transaction); returns the items' ids in order. */
  insert(row: Omit<typeof plans.$inferInsert, "id">, items: readonly NewPlanItem[]): { planId: number; itemIds: number[] } {
    const planId = Number(this.q.insertPlan.run(row.time, row.policy, JSON.stringify(row.reservations)).lastInsertRowid);
    const itemIds = items.map((i) => Number(this.q.insertItem.run(planId, i.jobId, i.kind, i.status, i.reason, i.outcome ?? null, JSON.stringify(i.detail)).lastInsertRowid));
    return { planId, itemIds };
  }

  /** What became of an item (`done` inside the transaction of the item's own state change). */
  settle(itemId: number, status: Exclude<PlanItemStatus, "accepted">, outcome: string | null = null): void {
    this.q.settle.run({ id: itemId, status, outcome });
  }

  /** Items still `accepted` when the controller starts were never carried out: `abandoned`. Returns how many. */
  abandonUnsettled(outcome: string): number {
    return this.db.update(planItems).set({ status: "abandoned", outcome }).where(eq(planItems.status, "accepted")).returning({ id: planItems.id }).all().length;
  }

  /** The newest plans a reader may see (each with the items it may see), newest first. */
  list(q: PlanQuery): { plan: PlanRow; items: PlanItemRow[] }[] {
    const where = this.visible(q);
    const ids = this.db
      .selectDistinct({ id: planItems.planId })
      .from(planItems)
      .leftJoin(jobs, eq(jobs.id, planItems.jobId))
      .where(where)
      .orderBy(desc(planItems.planId))
      .limit(q.limit)
      .all()
      .map((r) => r.id);
    if (ids.length === 0) return [];
    const rows = this.db.select().from(plans).where(inArray(plans.id, ids)).orderBy(desc(plans.id)).all();
    const items = this.db
      .select({ item: planItems })
      .from(planItems)
      .leftJoin(jobs, eq(jobs.id, planItems.jobId))
      .where(and(inArray(planItems.planId, ids), where))
      .orderBy(planItems.id)
      .all();
    const byPlan = new Map<number, PlanItemRow[]>();
    for (const { item } of items) {
      const list = byPlan.get(item.planId);
      if (list) list.push(item);
      else byPlan.set(item.planId, [item]);
    }
    return rows.map((plan) => ({ plan, items: byPlan.get(plan.id) ?? [] }));
  }

  /** A job's items, the newest `limit`, oldest first, with their plans' time and policy. */
  ofJob(jobId: number, limit: number): { item: PlanItemRow; time: number; policy: string }[] {
    return this.db
      .select({ item: planItems, time: plans.time, policy: plans.policy })
      .from(planItems)
      .innerJoin(plans, eq(plans.id, planItems.planId))
      .where(eq(planItems.jobId, jobId))
      .orderBy(desc(planItems.id))
      .limit(limit)
      .all()
      .reverse();
  }

  private visible(q: PlanQuery): SQL | undefined {
    return and(
      q.jobId !== undefined ? eq(planItems.jobId, q.jobId) : undefined,
      q.visibleTo !== undefined ? or(eq(jobs.id, q.visibleTo), eq(jobs.submittedBy, q.visibleTo)) : undefined,
      q.owner !== undefined ? eq(jobs.user, q.owner) : undefined,
    );
  }
}
