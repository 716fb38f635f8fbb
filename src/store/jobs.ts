/**
 * Queries on jobs, their allocations, events and steps. The writes every job makes on its way
 * through the system are drizzle prepared statements, compiled once per database: building and
 * preparing them anew on each call was a third of the controller's CPU time at 200 jobs/s.
 */
import { and, asc, desc, eq, getTableColumns, gt, gte, inArray, isNull, lt, lte, notExists, or, sql } from "drizzle-orm";
import type { SQLQueryBindings } from "bun:sqlite";
import { guarded, type Db } from "./db.ts";
import type { JobState } from "../domain/job.ts";
import { compressIndices } from "../domain/array.ts";
import type { NodeShare } from "../domain/resources.ts";
import { adaptations, jobArrays, jobCfgs, jobEvents, jobNodes, jobs, jobTexts, limitChanges, perfSamples, planItems, plans, steps, type JobUsage } from "./schema.ts";

export type JobRow = typeof jobs.$inferSelect;
/** A job as listings read it: without its script and environment (a listing shows neither). */
export type JobListRow = Omit<JobRow, "script" | "env">;
export type NewJob = typeof jobs.$inferInsert;
export type ArrayRow = typeof jobArrays.$inferSelect;
/** What every task of an array shares: stored once, in its job_arrays row. */
export const SHARED_BY_TASKS = ["argv", "script", "args", "env", "exclude", "nodelist", "sizes", "dependency", "elasticSettings"] as const;
type Shared = Pick<JobRow, (typeof SHARED_BY_TASKS)[number]>;
const NOT_SHARED: Shared = { argv: null, script: null, args: null, env: {}, exclude: null, nodelist: null, sizes: null, dependency: null, elasticSettings: null };
const { script: _script, env: _env, ...listColumns } = getTableColumns(jobs);
export type JobEventRow = typeof jobEvents.$inferSelect;
export type AllocationRow = typeof jobNodes.$inferSelect;
export type { JobUsage } from "./schema.ts";

/** Texts deflated by less than this many bytes (a page at the least) are stored as they are. */
const PACK_GAIN_BYTES = 512;

/**
 * A job_texts row's script and environment: deflated in `packed` when that saves a page or more
 * (a 4.6 KB environment is ~9 pages, each written to the WAL and again at the checkpoint), else
 * as they are.
 */
export function packTexts(script: string | null, env: Record<string, string>): { script: string | null; env: Record<string, string>; packed: Buffer | null } {
  const json = JSON.stringify({ script, env });
  if (json.length < 2 * PACK_GAIN_BYTES) return { script, env, packed: null };
  const packed = Buffer.from(Bun.deflateSync(Buffer.from(json)));
  return packed.length + PACK_GAIN_BYTES <= Buffer.byteLength(json) ? { script: null, env: {}, packed } : { script, env, packed: null };
}

/** "0-3,8" or "0,1" (as job_nodes stores core and GPU indices) -> [0, 1, 2, 3, 8]. */
export function expandIndices(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(",")) {
    if (part === "") continue;
    const [lo, hi] = part.split("-").map(Number) as [number, number?];
    for (let i = lo; i <= (hi ?? lo); i++) out.push(i);
  }
  return out;
}

/** How many indices "0-3,8" names (5), without listing them. */
export function countIndices(text: string): number {
  let n = 0;
  for (const part of text.split(",")) {
    if (part === "") continue;
    const [lo, hi] = part.split("-").map(Number) as [number, number?];
    n += (hi ?? lo) - lo + 1;
  }
  return n;
}

/** The share an allocation row records; undefined for a row from before shares (it held the whole node). */
export function shareOf(row: AllocationRow): NodeShare | undefined {
  if (row.cores === null) return undefined;
  return { node: row.node, cores: expandIndices(row.cores), memMiB: row.memMib ?? 0, gpus: expandIndices(row.gpus ?? "") };
}
export type StepRow = typeof steps.$inferSelect;
export type LimitChangeRow = typeof limitChanges.$inferSelect;

/** Which jobs a listing returns: all filters must hold; the newest `limit`, in id order. */
export interface JobFilter {
  states?: readonly JobState[];
  name?: string;
  user?: string;
  /** Only jobs in one of these partitions. */
  partitions?: readonly string[];
  arrayJobId?: number;
  /** Only these jobs, and the tasks of those that are arrays (squeue -j). */
  ids?: readonly number[];
  /** Submitted at or before (epoch ms). */
  until?: number;
  /** Not ended before (epoch ms): still active, or ended since. */
  since?: number;
  /** Only this job and the jobs it submitted (what a job's token may see). */
  visibleTo?: number;
  /** Only this user's jobs (what a user's token may see). */
  owner?: string;
  /** Only jobs with a smaller id (the page after one that ended there). */
  before?: number;
  limit: number;
}

const p = sql.placeholder;
/**
 * A placeholder in an update's set(): drizzle binds and encodes it like any other (its
 * fillPlaceholders runs the column's encoder), but its types only admit values there.
 */
const hole = (name: string) => sql.placeholder(name) as unknown as never;

function prepare(db: Db) {
  return {
    exists: db.select({ id: jobs.id }).from(jobs).where(eq(jobs.id, p("id"))).prepare(),
    insertTexts: db.insert(jobTexts).values({ jobId: p("jobId"), script: p("script"), env: p("env"), packed: p("packed") }).prepare(),
    /** The job_texts rows of a JSON array of job ids. */
    textsOfIds: db
      .select()
      .from(jobTexts)
      .where(sql`${jobTexts.jobId} IN (SELECT value FROM json_each(${p("ids")}))`)
      .prepare(),
    setNextStep: db.update(jobs).set({ nextStep: hole("nextStep") }).where(eq(jobs.id, p("id"))).prepare(),
    setProgram: db.update(jobs).set({ program: hole("program") }).where(eq(jobs.id, p("id"))).prepare(),
    setNodes: db.update(jobs).set({ nodes: hole("nodes") }).where(eq(jobs.id, p("id"))).prepare(),
    setState: db.update(jobs).set({ state: hole("state") }).where(eq(jobs.id, p("id"))).prepare(),
    /** Allocation rows of a JSON array of job ids (one prepared statement for any number of ids). */
    allocationsOfIds: db
      .select()
      .from(jobNodes)
      .where(sql`${jobNodes.jobId} IN (SELECT value FROM json_each(${p("ids")}))`)
      .orderBy(asc(jobNodes.id))
      .prepare(),
    closeSteps: db
      .update(steps)
      .set({ state: hole("state"), endTime: hole("time") })
      .where(and(eq(steps.jobId, p("jobId")), eq(steps.state, "RUNNING")))
      .prepare(),
  };
}

/** Statements on all the tasks of an array at once, in SQL (drizzle has no INSERT ... SELECT over json_each). */
function prepareTaskCopies(db: Db) {
  const names = Object.values(getTableColumns(jobs)).map((c) => c.name);
  const copied = names.filter((n) => n !== "id" && n !== "array_task_id");
  const cols = copied.map((n) => `"${n}"`).join(", ");
  return {
    /** Copies task row `?2` once per task id of the JSON list `?1`. */
    copyTasks: db.$client.prepare(`INSERT INTO jobs (${cols}, "array_task_id") SELECT ${copied.map((n) => `j."${n}"`).join(", ")}, t.value FROM jobs j, json_each(?1) t WHERE j.id = ?2 ORDER BY t.key`),
    taskIds: db.$client.prepare<{ id: number }, [number]>(`SELECT id FROM jobs WHERE array_job_id = ?1 ORDER BY id`),
    /** An event for every task of array `?1` but its first: message `?4`, or `?4` + "ARRAYID_TASKID" + `?5` when `?5` is not null. */
    taskEvents: db.$client.prepare(
      `INSERT INTO job_events (job_id, time, kind, message) SELECT id, ?2, ?3, CASE WHEN ?5 IS NULL THEN ?4 ELSE ?4 || array_job_id || '_' || array_task_id || ?5 END FROM jobs WHERE array_job_id = ?1 AND id != ?1 ORDER BY id`,
    ),
  };
}

/**
 * A new job's row, every column but its id, each value encoded by its column as drizzle encodes it
 * (JSON columns JSON.stringify, null as "null"; booleans 1/0); a column not given gets its default.
 * All of them: the drizzle insert it replaces named its columns one by one and had left out
 * `signal`, `requeue`, `append_output` and `program` (a restarted controller lost a job's --requeue).
 */
const INSERTED = Object.entries(getTableColumns(jobs)).filter(([key]) => key !== "id");

function insertedValues(row: Record<string, unknown>): SQLQueryBindings[] {
  return INSERTED.map(([key, c]) => {
    const v = row[key];
    if (v === undefined) return c.hasDefault ? (c.mapToDriverValue(c.default) as SQLQueryBindings) : null;
    return c.mapToDriverValue(v) as SQLQueryBindings;
  });
}

/**
 * The statements every job runs at its start and its end (and its events), in SQL: drizzle's placeholders and
 * row mapping cost more than these statements. JSON columns are written as drizzle writes them
 * (JSON.stringify, null as "null"). A job's allocation rows are read whole to find its latest on a
 * node: `max(id)` over them took about 5 times as long as reading them.
 */
function prepareHot(db: Db) {
  const s = db.$client;
  return {
    insertJob: s.prepare<{ id: number }, SQLQueryBindings[]>(`INSERT INTO jobs (${INSERTED.map(([, c]) => `"${c.name}"`).join(", ")}) VALUES (${INSERTED.map((_, i) => `?${i + 1}`).join(", ")}) RETURNING id`),
    markRunning: s.prepare<unknown, [number, number, number, number, string | null, string | null]>(
      `UPDATE jobs SET state = 'RUNNING', start_time = ?2, reason = NULL, nodes = ?3, next_step = ?4, output = ?5, error = ?6 WHERE id = ?1`,
    ),
    insertAllocation: s.prepare<unknown, [number, string, number, number, string, number, string]>(`INSERT INTO job_nodes (job_id, node, position, since, cores, mem_mib, gpus) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`),
    insertStep: s.prepare<unknown, [number, number, string, number, string, number, string | null]>(`INSERT INTO steps (job_id, step_id, argv, tasks, nodes, state, start_time, name) VALUES (?1, ?2, ?3, ?4, ?5, 'RUNNING', ?6, ?7)`),
    insertEvent: s.prepare<unknown, [number, number, string, string, string]>(`INSERT INTO job_events (job_id, time, kind, message, data) VALUES (?1, ?2, ?3, ?4, ?5)`),
    markEnded: s.prepare<unknown, [number, string, number, number | null, string | null]>(`UPDATE jobs SET state = ?2, end_time = ?3, exit_code = ?4, reason = ?5 WHERE id = ?1`),
    setUsage: s.prepare<unknown, [number, string]>(`UPDATE jobs SET usage = ?2 WHERE id = ?1`),
    closeAllocation: s.prepare<unknown, [number, number]>(`UPDATE job_nodes SET until = ?2 WHERE job_id = ?1 AND until IS NULL`),
    finishStep: s.prepare<unknown, [number, number, string, number, number | null]>(`UPDATE steps SET state = ?3, end_time = ?4, exit_code = ?5 WHERE job_id = ?1 AND step_id = ?2`),
    allocationNodes: s.prepare<{ id: number; node: string }, [number]>(`SELECT id, node FROM job_nodes WHERE job_id = ?1`),
    // By id, and only the job's own row there: a kept id may be one a rolled-back insert gave out and another row got since.
    setAllocationUsage: s.prepare<unknown, [number, number, number, number]>(`UPDATE job_nodes SET cpu_sec = ?2, peak_mem_mib = ?3 WHERE id = ?1 AND job_id = ?4`),
    endAllocationWithUsage: s.prepare<unknown, [number, number, number, number, number, string]>(`UPDATE job_nodes SET cpu_sec = ?2, peak_mem_mib = ?3, until = coalesce(until, ?4) WHERE id = ?1 AND job_id = ?5 AND node = ?6`),
    markEndedWithUsage: s.prepare<unknown, [number, string, number, number | null, string | null, string]>(`UPDATE jobs SET state = ?2, end_time = ?3, exit_code = ?4, reason = ?5, usage = ?6 WHERE id = ?1`),
    usageTotals: s.prepare<JobUsage, [number]>(`SELECT coalesce(sum(cpu_sec), 0) AS cpuSec, coalesce(max(peak_mem_mib), 0) AS peakMemMiB FROM job_nodes WHERE job_id = ?1`),
  };
}

/** Jobs whose allocation rows `recordNodeUsage` keeps at once (a job's usage reports come while it runs and as it ends). */
const USAGE_ROWS_KEPT = 256;

/** The job store of one database. Writes are synchronous; wrap related ones in `tx`. */
export class JobStore {
  private readonly q: ReturnType<typeof prepare> & ReturnType<typeof prepareTaskCopies> & ReturnType<typeof prepareHot>;
  /** Made once: bun:sqlite builds a new wrapper (and its properties) on every transaction() call. */
  private readonly runTx: (fn: () => unknown) => unknown;
  /**
   * Per job, each node's latest allocation row (its id), for `recordNodeUsage` and
   * `markEndedWithUsage`: a report found its row by reading all of the job's rows, so the 1,024
   * reports of a 1,024-node job read a million rows, and every one-node job's end read its row
   * again. Kept from the inserts of a job's first rows (`openAllocation` with `first`) and of the
   * rows added to a job kept here; else dropped when the job gets new rows, and read again when
   * asked. A row gone since (a purge, a rolled-back insert) is seen when its UPDATE changes
   * nothing. `rows` may count too many (rows inserted by a transaction that rolled back), never
   * too few: only "one row" takes a shortcut. At most USAGE_ROWS_KEPT jobs, the oldest dropped first.
   */
  private readonly latestRows = new Map<number, { byNode: Map<string, number>; rows: number }>();

  constructor(readonly db: Db) {
    this.q = { ...prepare(db), ...prepareTaskCopies(db), ...prepareHot(db) };
    this.runTx = db.$client.transaction((fn: () => unknown) => fn());
  }

  /** Told how long each transaction took, commit included (ms); the controller's metrics set it. */
  onCommit?: (ms: number) => void;

  /** Runs `fn` in one transaction; refused, or failed for want of storage, it throws StoreUnavailable (db.ts). */
  tx<T>(fn: () => T): T {
    if (!this.onCommit) return guarded(this.db.$client, () => this.runTx(fn) as T);
    const t0 = performance.now();
    try {
      return guarded(this.db.$client, () => this.runTx(fn) as T);
    } finally {
      this.onCommit(performance.now() - t0);
    }
  }

  /** Inside `tx`: runs `fn` in a savepoint of its own, undone alone if it throws. */
  savepoint<T>(fn: () => T): T {
    return this.runTx(fn) as T;
  }

  /** A new job's row, and its script and environment (if it has either) in job_texts, written once. */
  insertJob(values: Omit<NewJob, "id" | "state" | "output"> & { output?: string | null }): number {
    const script = values.script ?? null;
    const texts = script !== null || Object.keys(values.env).length > 0;
    const row = this.q.insertJob.get(...insertedValues({
      sampleInterval: null,
      elasticSettings: null,
      arrayJobId: null,
      arrayTaskId: null,
      arrayLimit: null,
      held: false,
      dependency: null,
      beginTime: null,
      exclude: null,
      nodelist: null,
      sizes: null,
      error: null,
      user: null,
      submittedBy: null,
      resources: null,
      partition: null,
      ...values,
      state: "PENDING",
      argv: values.argv ?? null,
      args: values.args ?? null,
      script: null,
      env: texts ? {} : values.env,
      elastic: values.elastic ?? false,
      tasks: values.tasks ?? null,
      tasksPerNode: values.tasksPerNode ?? null,
      overcommit: values.overcommit ?? false,
      output: values.output ?? null,
    }));
    if (texts) this.q.insertTexts.run({ jobId: row!.id, ...packTexts(script, values.env) });
    return row!.id;
  }

  /** The job runs from `time` on `nodes` nodes; its output and error paths are final now. */
  markRunning(id: number, time: number, nodes: number, nextStep: number, output: string | null, error: string | null): void {
    this.q.markRunning.run(id, time, nodes, nextStep, output, error);
  }

  /**
   * The tasks of a new array, in one go: the first task's row gives the array its id, the array's
   * row holds what they share, each task's row only what is its own. Returns the tasks' ids.
   */
  insertArray(values: Omit<NewJob, "id" | "state" | "output" | "arrayJobId" | "arrayTaskId"> & { output?: string | null }, indices: readonly number[], spec: string, step = 1): number[] {
    const own = { ...values, ...NOT_SHARED };
    const first = this.insertJob({ ...own, arrayTaskId: indices[0]! });
    this.db.update(jobs).set({ arrayJobId: first }).where(eq(jobs.id, first)).run();
    const shared = Object.fromEntries(SHARED_BY_TASKS.map((k) => [k, values[k] ?? null])) as Shared;
    this.db.insert(jobArrays).values({ id: first, spec, tasks: indices.length, firstTask: indices[0]!, lastTask: indices.at(-1)!, step, ...shared, env: values.env }).run();
    // The other tasks are the first one's row with their own task id: one statement for all of
    // them (a statement per task cost ~15 us each through drizzle, 15 ms for 1,001 tasks).
    if (indices.length > 1) this.q.copyTasks.run(JSON.stringify(indices.slice(1)), first);
    return this.q.taskIds.all(first).map((r) => r.id);
  }

  /** The same event for every task of an array but the first, in one statement; `message` may hold {task}. */
  addTaskEvents(arrayJobId: number, time: number, kind: string, message: string): void {
    const at = message.indexOf("{task}");
    this.q.taskEvents.run(arrayJobId, time, kind, at < 0 ? message : message.slice(0, at), at < 0 ? null : message.slice(at + "{task}".length));
  }

  /** An array's own row (undefined for one submitted before arrays had one). */
  arrayOf(arrayJobId: number): ArrayRow | undefined {
    return this.db.select().from(jobArrays).where(eq(jobArrays.id, arrayJobId)).get();
  }

  /** How many tasks array `arrayJobId` has, its lowest and highest task ids, and its spec's step. */
  arrayShape(arrayJobId: number): { count: number; min: number; max: number; step: number } {
    const a = this.arrayOf(arrayJobId);
    if (a) return { count: a.tasks, min: a.firstTask, max: a.lastTask, step: a.step };
    return this.db
      .select({ count: sql<number>`count(*)`, min: sql<number>`min(${jobs.arrayTaskId})`, max: sql<number>`max(${jobs.arrayTaskId})`, step: sql<number>`1` })
      .from(jobs)
      .where(eq(jobs.arrayJobId, arrayJobId))
      .get()!;
  }

  /** A job's state and exit code (what a dependency on it looks at), without the rest of its row. */
  outcomeOf(id: number): { state: string; exitCode: number | null } | undefined {
    return this.db.select({ state: jobs.state, exitCode: jobs.exitCode }).from(jobs).where(eq(jobs.id, id)).get();
  }

  /** The array job `id` is a task of: null if none, undefined if there is no job `id`. */
  arrayIdOf(id: number): number | null | undefined {
    return this.db.select({ arrayJobId: jobs.arrayJobId }).from(jobs).where(eq(jobs.id, id)).get()?.arrayJobId;
  }

  /** The ids of array `arrayJobId`'s tasks, in task order. */
  arrayTaskIds(arrayJobId: number): number[] {
    return this.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.arrayJobId, arrayJobId)).orderBy(asc(jobs.arrayTaskId)).all().map((r) => r.id);
  }

  /** The job id of task `task` of array `arrayJobId`. */
  arrayTaskId(arrayJobId: number, task: number): number | undefined {
    return this.db.select({ id: jobs.id }).from(jobs).where(and(eq(jobs.arrayJobId, arrayJobId), eq(jobs.arrayTaskId, task))).get()?.id;
  }

  /**
   * Rows given their script and environment from job_texts (where they have a row there) and,
   * for array tasks, what their array shares (each array read once, its values shared by
   * reference among its tasks); other rows as they are.
   */
  private withShared<R extends JobListRow>(rows: R[], keys: readonly (keyof Shared)[] = SHARED_BY_TASKS): R[] {
    if (rows.length > 0 && keys.includes("env")) {
      const byId = new Map(rows.map((r) => [r.id, r as unknown as JobRow]));
      for (const t of this.q.textsOfIds.all({ ids: JSON.stringify([...byId.keys()]) })) {
        const r = byId.get(t.jobId)!;
        const { script, env } = t.packed ? (JSON.parse(new TextDecoder().decode(Bun.inflateSync(new Uint8Array(t.packed)))) as Pick<JobRow, "script" | "env">) : t;
        r.script = script;
        r.env = env;
      }
    }
    const arrayIds = [...new Set(rows.flatMap((r) => (r.arrayJobId === null ? [] : [r.arrayJobId])))];
    if (arrayIds.length === 0) return rows;
    const arrays = new Map<number, Partial<ArrayRow>>();
    const columns = { id: jobArrays.id, ...Object.fromEntries(keys.map((k) => [k, jobArrays[k]])) };
    for (let i = 0; i < arrayIds.length; i += 500)
      for (const a of this.db.select(columns).from(jobArrays).where(inArray(jobArrays.id, arrayIds.slice(i, i + 500))).all()) arrays.set(a.id as number, a as Partial<ArrayRow>);
    for (const r of rows) {
      const a = r.arrayJobId === null ? undefined : arrays.get(r.arrayJobId);
      if (a) for (const k of keys) (r as Record<string, unknown>)[k] = a[k];
    }
    return rows;
  }

  /** Holds or releases jobs `ids` (an array's tasks: one statement for all of them). */
  setHeld(ids: readonly number[], held: boolean): void {
    this.db
      .update(jobs)
      .set({ held })
      .where(sql`${jobs.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)
      .run();
  }

  /** The tasks of array `arrayJobId`, in task order. */
  arrayTasks(arrayJobId: number): JobRow[] {
    return this.withShared(this.db.select().from(jobs).where(eq(jobs.arrayJobId, arrayJobId)).orderBy(asc(jobs.arrayTaskId)).all());
  }

  /** Jobs that ended before `before`, with everything recorded about them; returns how many. */
  purgeEnded(before: number): number {
    return this.tx(() => {
      const ids = this.db.select({ id: jobs.id }).from(jobs).where(lt(jobs.endTime, before)).all().map((r) => r.id);
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        this.db.delete(jobEvents).where(inArray(jobEvents.jobId, chunk)).run();
        this.db.delete(jobNodes).where(inArray(jobNodes.jobId, chunk)).run();
        this.db.delete(steps).where(inArray(steps.jobId, chunk)).run();
        this.db.delete(adaptations).where(inArray(adaptations.jobId, chunk)).run();
        this.db.delete(perfSamples).where(inArray(perfSamples.jobId, chunk)).run();
        this.db.delete(jobCfgs).where(inArray(jobCfgs.jobId, chunk)).run();
        this.db.delete(limitChanges).where(inArray(limitChanges.jobId, chunk)).run();
        this.db.delete(jobTexts).where(inArray(jobTexts.jobId, chunk)).run();
        this.db.delete(jobs).where(inArray(jobs.id, chunk)).run();
      }
      // An array's shared row goes with its last task.
      this.db.delete(jobArrays).where(notExists(this.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.arrayJobId, jobArrays.id)))).run();
      this.db.delete(planItems).where(inArray(planItems.planId, this.db.select({ id: plans.id }).from(plans).where(lt(plans.time, before)))).run();
      this.db.delete(plans).where(lt(plans.time, before)).run();
      return ids.length;
    });
  }

  /** Committed adaptations per job, for those of `ids` that have any. */
  resizeCounts(ids: readonly number[]): Map<number, number> {
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    const rows = this.db
      .select({ jobId: adaptations.jobId, n: sql<number>`count(*)` })
      .from(adaptations)
      .where(and(inArray(adaptations.jobId, [...ids]), eq(adaptations.state, "COMMITTED")))
      .groupBy(adaptations.jobId)
      .all();
    for (const r of rows) out.set(r.jobId, r.n);
    return out;
  }

  markEnded(id: number, state: string, time: number, exitCode: number | null, reason: string | null): void {
    this.q.markEnded.run(id, state, time, exitCode, reason);
  }

  /** A running job back in the queue (--requeue): pending, not started, restarted once more. */
  markRequeued(id: number): void {
    this.db.update(jobs).set({ state: "PENDING", startTime: null, reason: null, restarts: sql`${jobs.restarts} + 1` }).where(eq(jobs.id, id)).run();
  }

  setNextStep(id: number, nextStep: number): void {
    this.q.setNextStep.run({ id, nextStep });
  }

  /** An EPOP program's last report (null: none). */
  setProgram(id: number, program: Record<string, unknown> | null): void {
    this.q.setProgram.run({ id, program });
  }

  setNodes(id: number, nodes: number): void {
    this.q.setNodes.run({ id, nodes });
  }

  setState(id: number, state: string): void {
    this.q.setState.run({ id, state });
  }

  /** The job's name or dependency (scontrol update). */
  setFields(id: number, fields: Partial<Pick<JobRow, "name" | "dependency" | "nodes" | "minNodes" | "maxNodes" | "resources" | "partition">>): void {
    this.db.update(jobs).set(fields).where(eq(jobs.id, id)).run();
  }

  /** The job's time limit (seconds from its start). */
  setTimeLimit(id: number, timeLimit: number): void {
    this.db.update(jobs).set({ timeLimit }).where(eq(jobs.id, id)).run();
  }

  /** The record of a change of the job's time limit, with its reason. */
  recordLimitChange(jobId: number, time: number, fromLimit: number, toLimit: number, reason: string): void {
    this.db.insert(limitChanges).values({ jobId, time, fromLimit, toLimit, reason }).run();
  }

  limitChangesOf(jobId: number): LimitChangeRow[] {
    return this.db.select().from(limitChanges).where(eq(limitChanges.jobId, jobId)).orderBy(asc(limitChanges.id)).all();
  }

  addEvent(jobId: number, time: number, kind: string, message: string, data?: Record<string, unknown>): void {
    this.q.insertEvent.run(jobId, time, kind, message, JSON.stringify(data ?? null));
  }

  /**
   * The job holds these shares from `time`, after the `firstPosition` nodes it held already.
   * `first`: the job never had allocation rows before these (its first start).
   */
  openAllocation(jobId: number, shares: readonly NodeShare[], time: number, firstPosition = 0, first = false): void {
    const ids = shares.map((sh, i) => Number(this.q.insertAllocation.run(jobId, sh.node, firstPosition + i, time, compressIndices(sh.cores), sh.memMiB, sh.gpus.join(",")).lastInsertRowid));
    const known = first ? { byNode: new Map<string, number>(), rows: 0 } : this.latestRows.get(jobId);
    if (!known) return;
    shares.forEach((sh, i) => known.byNode.set(sh.node, ids[i]!));
    known.rows += shares.length;
    this.keepRows(jobId, known);
  }

  private keepRows(jobId: number, known: { byNode: Map<string, number>; rows: number }): void {
    this.latestRows.delete(jobId);
    if (this.latestRows.size >= USAGE_ROWS_KEPT) this.latestRows.delete(this.latestRows.keys().next().value!);
    this.latestRows.set(jobId, known);
  }

  /** The job's latest allocation row on each node, read and kept (see `latestRows`). */
  private readLatestRows(jobId: number): { byNode: Map<string, number>; rows: number } {
    const rows = this.q.allocationNodes.all(jobId);
    const byNode = new Map<string, number>();
    for (const r of rows) if (r.id > (byNode.get(r.node) ?? 0)) byNode.set(r.node, r.id);
    const known = { byNode, rows: rows.length };
    this.keepRows(jobId, known);
    return known;
  }

  /**
   * What the job used on `node` so far (its agent's latest report, kept on the job's latest row
   * there), and so in all: CPU seconds summed over its rows, the most memory of one. Undefined if
   * the job never held the node.
   */
  recordNodeUsage(jobId: number, node: string, cpuSec: number, peakMemMiB: number): JobUsage | undefined {
    // Found, then updated: one UPDATE with the lookup as its subquery ran at about half the speed
    // (SQLite reads the rows to change first when a subquery reads the same table).
    let known = this.latestRows.get(jobId);
    let latest = known?.byNode.get(node);
    if (latest === undefined || this.q.setAllocationUsage.run(latest, cpuSec, peakMemMiB, jobId).changes === 0) {
      known = this.readLatestRows(jobId);
      latest = known.byNode.get(node);
      if (latest === undefined) return undefined;
      this.q.setAllocationUsage.run(latest, cpuSec, peakMemMiB, jobId);
    }
    // A job of one row (most jobs): its totals are this report, as the sums would read them back.
    if (known!.rows === 1) return { cpuSec, peakMemMiB };
    const t = this.q.usageTotals.get(jobId)!;
    return { cpuSec: t.cpuSec, peakMemMiB: t.peakMemMiB };
  }

  /**
   * A job's end with its one node's usage report: what `recordNodeUsage` + `setUsage`, then
   * `markEnded` + `closeAllocation` write, in one UPDATE of the job's row and one of its allocation
   * row, where the job has exactly one allocation row, on `node` (a one-node job). Returns its
   * usage; undefined, with nothing written, for any other job.
   */
  markEndedWithUsage(id: number, node: string, cpuSec: number, peakMemMiB: number, state: string, time: number, exitCode: number | null, reason: string | null): JobUsage | undefined {
    // The row kept from its insert (a count of one is never too few), else read: one statement fewer per job.
    const kept = this.latestRows.get(id);
    const row = kept?.rows === 1 ? kept.byNode.get(node) : undefined;
    if (row === undefined || this.q.endAllocationWithUsage.run(row, cpuSec, peakMemMiB, time, id, node).changes === 0) {
      const rows = this.q.allocationNodes.all(id);
      if (rows.length !== 1 || rows[0]!.node !== node) return undefined;
      this.q.endAllocationWithUsage.run(rows[0]!.id, cpuSec, peakMemMiB, time, id, node);
    }
    const usage = { cpuSec, peakMemMiB };
    this.q.markEndedWithUsage.run(id, state, time, exitCode, reason, JSON.stringify(usage));
    return usage;
  }

  setUsage(id: number, usage: JobUsage): void {
    this.q.setUsage.run(id, JSON.stringify(usage));
  }

  /** A job that ended FAILED is OUT_OF_MEMORY (its OOM kill was reported after its exit). */
  markOutOfMemory(id: number, reason: string): void {
    this.db
      .update(jobs)
      .set({ state: "OUT_OF_MEMORY", reason })
      .where(and(eq(jobs.id, id), eq(jobs.state, "FAILED")))
      .run();
  }

  /** Ends the job's hold on `nodes` (all of its nodes if omitted). */
  closeAllocation(jobId: number, time: number, nodes?: readonly string[]): void {
    if (!nodes) {
      this.q.closeAllocation.run(jobId, time);
      return;
    }
    this.db
      .update(jobNodes)
      .set({ until: time })
      .where(and(eq(jobNodes.jobId, jobId), isNull(jobNodes.until), inArray(jobNodes.node, [...nodes])))
      .run();
  }

  insertStep(jobId: number, stepId: number, argv: string[], tasks: number, nodes: string[], time: number, name?: string): void {
    this.q.insertStep.run(jobId, stepId, JSON.stringify(argv), tasks, JSON.stringify(nodes), time, name ?? null);
  }

  finishStep(jobId: number, stepId: number, state: string, time: number, exitCode: number | null): void {
    this.q.finishStep.run(jobId, stepId, state, time, exitCode);
  }

  /** An elastic step's layout after a committed adaptation: its ranks, over the job's nodes now. */
  setStepLayout(jobId: number, stepId: number, tasks: number, nodes: string[]): void {
    this.db.update(steps).set({ tasks, nodes }).where(and(eq(steps.jobId, jobId), eq(steps.stepId, stepId))).run();
  }

  /** The command of one step (undefined: no such step). */
  stepArgv(jobId: number, stepId: number): string[] | undefined {
    return this.db.select({ argv: steps.argv }).from(steps).where(and(eq(steps.jobId, jobId), eq(steps.stepId, stepId))).get()?.argv;
  }

  /** Steps still marked RUNNING of a job that ended: they ended with it. */
  closeSteps(jobId: number, state: string, time: number): void {
    this.q.closeSteps.run({ jobId, state, time });
  }

  activeJobs(states: readonly JobState[]): JobRow[] {
    return this.withShared(this.db.select().from(jobs).where(inArray(jobs.state, [...states])).orderBy(asc(jobs.id)).all());
  }

  /** Every job's open rows, each job's in rank order (the order it took them in). */
  openAllocations(): AllocationRow[] {
    return this.db.select().from(jobNodes).where(isNull(jobNodes.until)).orderBy(asc(jobNodes.jobId), asc(jobNodes.id)).all();
  }

  listJobs(filter: JobFilter): JobListRow[] {
    return [...this.jobPages(filter, filter.limit)].flat();
  }

  /** When jobs older than the newest `limit` match the filter: the `before` that lists them (the oldest of those `limit`). */
  nextBefore(filter: JobFilter): number | undefined {
    const where = this.filterOf(filter);
    return this.nthNewest(where, filter.limit) === undefined ? undefined : this.nthNewest(where, filter.limit - 1);
  }

  /** The id of the `n`th newest job (0: the newest) among those `where` selects. */
  private nthNewest(where: ReturnType<JobStore["filterOf"]>, n: number): number | undefined {
    return this.db.select({ id: jobs.id }).from(jobs).where(where).orderBy(desc(jobs.id)).limit(1).offset(n).get()?.id;
  }

  /**
   * The jobs `listJobs` returns, oldest first, a page at a time, each page one query by id range
   * (the caller may let other work run between pages; jobs submitted meanwhile are not added).
   */
  *jobPages(filter: JobFilter, pageSize = 200): Generator<JobListRow[]> {
    const where = this.filterOf(filter);
    const newest = this.nthNewest(where, 0);
    if (newest === undefined) return;
    // Just before the oldest of the newest `limit`, or before all if there are fewer.
    let after = (this.nthNewest(where, filter.limit - 1) ?? 0) - 1;
    for (;;) {
      const rows = this.db.select(listColumns).from(jobs).where(and(where, gt(jobs.id, after), lte(jobs.id, newest))).orderBy(asc(jobs.id)).limit(pageSize).all();
      if (rows.length > 0) yield this.withShared(rows, SHARED_BY_TASKS.filter((k) => k !== "script" && k !== "env"));
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  private filterOf(filter: JobFilter) {
    const where = [
      filter.states ? inArray(jobs.state, [...filter.states]) : undefined,
      filter.name !== undefined ? eq(jobs.name, filter.name) : undefined,
      filter.user !== undefined ? eq(jobs.user, filter.user) : undefined,
      filter.partitions !== undefined ? inArray(jobs.partition, [...filter.partitions]) : undefined,
      filter.arrayJobId !== undefined ? eq(jobs.arrayJobId, filter.arrayJobId) : undefined,
      filter.ids !== undefined ? or(inArray(jobs.id, [...filter.ids]), inArray(jobs.arrayJobId, [...filter.ids])) : undefined,
      filter.until !== undefined ? lte(jobs.submitTime, filter.until) : undefined,
      filter.since !== undefined ? or(isNull(jobs.endTime), gte(jobs.endTime, filter.since)) : undefined,
      filter.visibleTo !== undefined ? or(eq(jobs.id, filter.visibleTo), eq(jobs.submittedBy, filter.visibleTo)) : undefined,
      filter.owner !== undefined ? eq(jobs.user, filter.owner) : undefined,
      filter.before !== undefined ? lt(jobs.id, filter.before) : undefined,
    ].filter((w) => w !== undefined);
    return where.length > 0 ? and(...where) : undefined;
  }

  /** Whether there is a job `id` (active, or ended and not purged), without reading its row. */
  hasJob(id: number): boolean {
    return this.q.exists.get({ id }) !== undefined;
  }

  getJob(id: number): JobRow | undefined {
    const row = this.db.select().from(jobs).where(eq(jobs.id, id)).get();
    return row && this.withShared([row])[0];
  }

  eventsOf(id: number): JobEventRow[] {
    return this.db.select().from(jobEvents).where(eq(jobEvents.jobId, id)).orderBy(asc(jobEvents.id)).all();
  }

  allocationsOf(ids: number | readonly number[]): AllocationRow[] {
    // Prepared once (the live timeline asks each second): building a query per call cost more than running it.
    return this.q.allocationsOfIds.all({ ids: JSON.stringify(typeof ids === "number" ? [ids] : ids) });
  }

  /**
   * Every node a job held since `since` (epoch ms) or holds now, with the job's user: what fair
   * share charges (roles/controller/usage.ts rebuilds each user's decayed usage from it at a start).
   */
  usageSince(since: number): (Pick<AllocationRow, "node" | "since" | "until" | "cores" | "memMib" | "gpus"> & { user: string | null })[] {
    return this.db
      .select({ user: jobs.user, node: jobNodes.node, since: jobNodes.since, until: jobNodes.until, cores: jobNodes.cores, memMib: jobNodes.memMib, gpus: jobNodes.gpus })
      .from(jobNodes)
      .innerJoin(jobs, eq(jobs.id, jobNodes.jobId))
      .where(or(isNull(jobNodes.until), gt(jobNodes.until, since)))
      .all();
  }

  stepsOf(id: number): StepRow[] {
    return this.db.select().from(steps).where(eq(steps.jobId, id)).orderBy(asc(steps.stepId)).all();
  }
}
