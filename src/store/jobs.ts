/**
 * Queries on jobs, their allocations, events and steps. The writes every job makes on its way
 * through the system are drizzle prepared statements, compiled once per database: building and
 * preparing them anew on each call was a third of the controller's CPU time at 200 jobs/s.
 */
import { and, asc, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "./db.ts";
import { jobEvents, jobNodes, jobs, steps } from "./schema.ts";

export type JobRow = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert;
export type JobEventRow = typeof jobEvents.$inferSelect;
export type AllocationRow = typeof jobNodes.$inferSelect;
export type StepRow = typeof steps.$inferSelect;

const p = sql.placeholder;
/**
 * A placeholder in an update's set(): drizzle binds and encodes it like any other (its
 * fillPlaceholders runs the column's encoder), but its types only admit values there.
 */
const hole = (name: string) => sql.placeholder(name) as unknown as never;

function prepare(db: Db) {
  return {
    insertJob: db
      .insert(jobs)
      .values({
        name: p("name"),
        kind: p("kind"),
        state: p("state"),
        argv: p("argv"),
        script: p("script"),
        nodes: p("nodes"),
        minNodes: p("minNodes"),
        maxNodes: p("maxNodes"),
        elastic: p("elastic"),
        tasks: p("tasks"),
        tasksPerNode: p("tasksPerNode"),
        timeLimit: p("timeLimit"),
        env: p("env"),
        cwd: p("cwd"),
        output: p("output"),
        submitTime: p("submitTime"),
        sampleInterval: p("sampleInterval"),
        elasticSettings: p("elasticSettings"),
      })
      .returning({ id: jobs.id })
      .prepare(),
    setOutput: db.update(jobs).set({ output: hole("output") }).where(eq(jobs.id, p("id"))).prepare(),
    markRunning: db
      .update(jobs)
      .set({ state: "RUNNING", startTime: hole("time"), reason: null, nodes: hole("nodes"), nextStep: hole("nextStep") })
      .where(eq(jobs.id, p("id")))
      .prepare(),
    markEnded: db
      .update(jobs)
      .set({ state: hole("state"), endTime: hole("time"), exitCode: hole("exitCode"), reason: hole("reason") })
      .where(eq(jobs.id, p("id")))
      .prepare(),
    setNextStep: db.update(jobs).set({ nextStep: hole("nextStep") }).where(eq(jobs.id, p("id"))).prepare(),
    setNodes: db.update(jobs).set({ nodes: hole("nodes") }).where(eq(jobs.id, p("id"))).prepare(),
    setState: db.update(jobs).set({ state: hole("state") }).where(eq(jobs.id, p("id"))).prepare(),
    insertEvent: db.insert(jobEvents).values({ jobId: p("jobId"), time: p("time"), kind: p("kind"), message: p("message"), data: p("data") }).prepare(),
    insertAllocation: db.insert(jobNodes).values({ jobId: p("jobId"), node: p("node"), position: p("position"), since: p("time") }).prepare(),
    closeAllocation: db
      .update(jobNodes)
      .set({ until: hole("time") })
      .where(and(eq(jobNodes.jobId, p("jobId")), isNull(jobNodes.until)))
      .prepare(),
    insertStep: db
      .insert(steps)
      .values({ jobId: p("jobId"), stepId: p("stepId"), argv: p("argv"), tasks: p("tasks"), nodes: p("nodes"), state: "RUNNING", startTime: p("time") })
      .prepare(),
    finishStep: db
      .update(steps)
      .set({ state: hole("state"), endTime: hole("time"), exitCode: hole("exitCode") })
      .where(and(eq(steps.jobId, p("jobId")), eq(steps.stepId, p("stepId"))))
      .prepare(),
    closeSteps: db
      .update(steps)
      .set({ state: hole("state"), endTime: hole("time") })
      .where(and(eq(steps.jobId, p("jobId")), eq(steps.state, "RUNNING")))
      .prepare(),
  };
}

/** The job store of one database. Writes are synchronous; wrap related ones in `tx`. */
export class JobStore {
  private readonly q: ReturnType<typeof prepare>;
  /** Made once: bun:sqlite builds a new wrapper (and its properties) on every transaction() call. */
  private readonly runTx: (fn: () => unknown) => unknown;

  constructor(readonly db: Db) {
    this.q = prepare(db);
    this.runTx = db.$client.transaction((fn: () => unknown) => fn());
  }

  tx<T>(fn: () => T): T {
    return this.runTx(fn) as T;
  }

  insertJob(values: Omit<NewJob, "id" | "state" | "output"> & { output?: string | null }): number {
    const row = this.q.insertJob.get({
      sampleInterval: null,
      elasticSettings: null,
      ...values,
      state: "PENDING",
      argv: values.argv ?? null,
      script: values.script ?? null,
      elastic: values.elastic ?? false,
      tasks: values.tasks ?? null,
      tasksPerNode: values.tasksPerNode ?? null,
      output: values.output ?? null,
    });
    return row!.id;
  }

  setOutput(id: number, output: string | null): void {
    this.q.setOutput.run({ id, output });
  }

  markRunning(id: number, time: number, nodes: number, nextStep: number): void {
    this.q.markRunning.run({ id, time, nodes, nextStep });
  }

  markEnded(id: number, state: string, time: number, exitCode: number | null, reason: string | null): void {
    this.q.markEnded.run({ id, state, time, exitCode, reason });
  }

  setNextStep(id: number, nextStep: number): void {
    this.q.setNextStep.run({ id, nextStep });
  }

  setNodes(id: number, nodes: number): void {
    this.q.setNodes.run({ id, nodes });
  }

  setState(id: number, state: string): void {
    this.q.setState.run({ id, state });
  }

  addEvent(jobId: number, time: number, kind: string, message: string, data?: Record<string, unknown>): void {
    this.q.insertEvent.run({ jobId, time, kind, message, data: data ?? null });
  }

  openAllocation(jobId: number, nodes: readonly string[], time: number, firstPosition = 0): void {
    nodes.forEach((node, i) => this.q.insertAllocation.run({ jobId, node, position: firstPosition + i, time }));
  }

  /** Ends the job's hold on `nodes` (all of its nodes if omitted). */
  closeAllocation(jobId: number, time: number, nodes?: readonly string[]): void {
    if (!nodes) {
      this.q.closeAllocation.run({ jobId, time });
      return;
    }
    this.db
      .update(jobNodes)
      .set({ until: time })
      .where(and(eq(jobNodes.jobId, jobId), isNull(jobNodes.until), inArray(jobNodes.node, [...nodes])))
      .run();
  }

  insertStep(jobId: number, stepId: number, argv: string[], tasks: number, nodes: string[], time: number): void {
    this.q.insertStep.run({ jobId, stepId, argv, tasks, nodes, time });
  }

  finishStep(jobId: number, stepId: number, state: string, time: number, exitCode: number | null): void {
    this.q.finishStep.run({ jobId, stepId, state, time, exitCode });
  }

  /** Steps still marked RUNNING of a job that ended: they ended with it. */
  closeSteps(jobId: number, state: string, time: number): void {
    this.q.closeSteps.run({ jobId, state, time });
  }

  activeJobs(states: readonly string[]): JobRow[] {
    return this.db.select().from(jobs).where(inArray(jobs.state, [...states])).orderBy(asc(jobs.id)).all();
  }

  openAllocations(): AllocationRow[] {
    return this.db.select().from(jobNodes).where(isNull(jobNodes.until)).orderBy(asc(jobNodes.jobId), asc(jobNodes.position)).all();
  }

  listJobs(filter: { states?: readonly string[]; limit: number }): JobRow[] {
    const q = this.db.select().from(jobs);
    const rows = (filter.states ? q.where(inArray(jobs.state, [...filter.states])) : q).orderBy(desc(jobs.id)).limit(filter.limit).all();
    return rows.reverse();
  }

  getJob(id: number): JobRow | undefined {
    return this.db.select().from(jobs).where(eq(jobs.id, id)).get();
  }

  eventsOf(id: number): JobEventRow[] {
    return this.db.select().from(jobEvents).where(eq(jobEvents.jobId, id)).orderBy(asc(jobEvents.id)).all();
  }

  allocationsOf(ids: number | readonly number[]): AllocationRow[] {
    const where = typeof ids === "number" ? eq(jobNodes.jobId, ids) : inArray(jobNodes.jobId, [...ids]);
    return this.db.select().from(jobNodes).where(where).orderBy(asc(jobNodes.id)).all();
  }

  stepsOf(id: number): StepRow[] {
    return this.db.select().from(steps).where(eq(steps.jobId, id)).orderBy(asc(steps.stepId)).all();
  }
}
