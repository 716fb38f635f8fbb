/** Queries on jobs, their allocations, events and steps. */
import { and, desc, eq, inArray, isNull, asc } from "drizzle-orm";
import type { Db } from "./db.ts";
import { jobEvents, jobNodes, jobs, steps } from "./schema.ts";

export type JobRow = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert;
export type JobEventRow = typeof jobEvents.$inferSelect;
export type AllocationRow = typeof jobNodes.$inferSelect;
export type StepRow = typeof steps.$inferSelect;
/** A handle that can run queries: the database or an open transaction. */
export type Tx = Pick<Db, "insert" | "update" | "select" | "delete">;

export function insertJob(db: Tx, values: NewJob): JobRow {
  return db.insert(jobs).values(values).returning().get();
}

export function updateJob(db: Tx, id: number, patch: Partial<NewJob>): void {
  db.update(jobs).set(patch).where(eq(jobs.id, id)).run();
}

export function addEvent(db: Tx, jobId: number, time: number, kind: string, message: string, data?: Record<string, unknown>): void {
  db.insert(jobEvents).values({ jobId, time, kind, message, data: data ?? null }).run();
}

export function openAllocation(db: Tx, jobId: number, nodes: readonly string[], time: number, firstPosition = 0): void {
  if (nodes.length === 0) return;
  db.insert(jobNodes)
    .values(nodes.map((node, i) => ({ jobId, node, position: firstPosition + i, since: time })))
    .run();
}

/** Ends the job's hold on `nodes` (all of its nodes if omitted). */
export function closeAllocation(db: Tx, jobId: number, time: number, nodes?: readonly string[]): void {
  const open = and(eq(jobNodes.jobId, jobId), isNull(jobNodes.until));
  db.update(jobNodes)
    .set({ until: time })
    .where(nodes ? and(open, inArray(jobNodes.node, [...nodes])) : open)
    .run();
}

export function activeJobs(db: Tx, states: readonly string[]): JobRow[] {
  return db.select().from(jobs).where(inArray(jobs.state, [...states])).orderBy(asc(jobs.id)).all();
}

export function openAllocations(db: Tx): AllocationRow[] {
  return db.select().from(jobNodes).where(isNull(jobNodes.until)).orderBy(asc(jobNodes.jobId), asc(jobNodes.position)).all();
}

export function listJobs(db: Tx, filter: { states?: readonly string[]; limit: number }): JobRow[] {
  const q = db.select().from(jobs);
  const rows = (filter.states ? q.where(inArray(jobs.state, [...filter.states])) : q).orderBy(desc(jobs.id)).limit(filter.limit).all();
  return rows.reverse();
}

export function getJob(db: Tx, id: number): JobRow | undefined {
  return db.select().from(jobs).where(eq(jobs.id, id)).get();
}

export function jobEventsOf(db: Tx, id: number): JobEventRow[] {
  return db.select().from(jobEvents).where(eq(jobEvents.jobId, id)).orderBy(asc(jobEvents.id)).all();
}

export function allocationsOf(db: Tx, id: number): AllocationRow[] {
  return db.select().from(jobNodes).where(eq(jobNodes.jobId, id)).orderBy(asc(jobNodes.id)).all();
}

export function stepsOf(db: Tx, id: number): StepRow[] {
  return db.select().from(steps).where(eq(steps.jobId, id)).orderBy(asc(steps.stepId)).all();
}

export function insertStep(db: Tx, row: typeof steps.$inferInsert): void {
  db.insert(steps).values(row).run();
}

export function finishStep(db: Tx, jobId: number, stepId: number, patch: { state: string; endTime: number; exitCode: number | null }): void {
  db.update(steps).set(patch).where(and(eq(steps.jobId, jobId), eq(steps.stepId, stepId))).run();
}

/** Steps still marked RUNNING of a job that ended: they ended with it. */
export function closeSteps(db: Tx, jobId: number, state: string, time: number): void {
  db.update(steps).set({ state, endTime: time }).where(and(eq(steps.jobId, jobId), eq(steps.state, "RUNNING"))).run();
}
