/**
 * An array's shared values (argv, script and its arguments, environment, node lists, dependency, settings) are
 * stored once, in job_arrays, and read back into every task's row; an array written before that
 * table (each task with its own copies, no job_arrays row) reads as it did; the row goes with the
 * array's last task when history is purged.
 */
import { expect, test } from "bun:test";
import { openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";

const values = {
  name: "sweep",
  kind: "batch" as const,
  argv: null,
  script: "#!/bin/sh\necho $EBB_ARRAY_TASK_ID\n",
  args: ["config.yaml", ""],
  nodes: 1,
  minNodes: 1,
  maxNodes: 1,
  timeLimit: 60,
  env: { BIG: "x".repeat(100_000) },
  cwd: "/tmp",
  submitTime: 1000,
  exclude: ["node09"],
  arrayLimit: 2,
};

const sizeOf = (store: JobStore, table: string) => (store.db.$client.query(`select sum(length(coalesce(script,'')) + length(env)) as n from ${table}`).get() as { n: number }).n;

test("a new array keeps its script, its arguments and environment once; every task reads them", () => {
  const store = new JobStore(openDb(":memory:"));
  const ids = store.tx(() => store.insertArray(values, [0, 5, 6, 7], "0,5-7%2"));
  expect(ids).toEqual([1, 2, 3, 4]);
  expect(sizeOf(store, "job_arrays")).toBeGreaterThan(100_000);
  expect(sizeOf(store, "jobs")).toBeLessThan(100);
  const task = store.getJob(3)!;
  expect({ arrayJobId: task.arrayJobId, arrayTaskId: task.arrayTaskId, script: task.script, args: task.args, env: task.env, exclude: task.exclude }).toEqual({
    arrayJobId: 1,
    arrayTaskId: 6,
    script: values.script,
    args: values.args,
    env: values.env,
    exclude: ["node09"],
  });
  expect(store.arrayShape(1)).toEqual({ count: 4, min: 0, max: 7, step: 1 });
  expect(store.arrayOf(1)?.spec).toBe("0,5-7%2");
  expect(store.arrayTaskIds(1)).toEqual([1, 2, 3, 4]);
  expect(store.arrayTaskId(1, 7)).toBe(4);
  expect(store.arrayTasks(1).map((t) => [t.id, t.arrayTaskId, t.script === values.script])).toEqual([
    [1, 0, true],
    [2, 5, true],
    [3, 6, true],
    [4, 7, true],
  ]);
  // Listings show no script nor environment, but what else the tasks share.
  const listed = store.listJobs({ limit: 10 });
  expect(listed.map((r) => [r.id, "script" in r, "env" in r, r.exclude])).toEqual(ids.map((id) => [id, false, false, ["node09"]]));
  expect(store.activeJobs(["PENDING"]).every((r) => r.env.BIG === values.env.BIG)).toBe(true);
});

test("an array written before job_arrays (each task its own copies) reads as before", () => {
  const store = new JobStore(openDb(":memory:"));
  store.tx(() => {
    for (const task of [1, 2, 3]) {
      const id = store.insertJob({ ...values, arrayTaskId: task, arrayJobId: task === 1 ? null : 1 });
      if (task === 1) store.db.$client.run("update jobs set array_job_id = ? where id = ?", [id, id]);
    }
  });
  expect(store.arrayOf(1)).toBeUndefined();
  expect(store.arrayShape(1)).toEqual({ count: 3, min: 1, max: 3, step: 1 });
  expect(store.getJob(2)).toMatchObject({ arrayJobId: 1, arrayTaskId: 2, script: values.script, env: values.env });
  expect(store.arrayTasks(1).map((t) => t.env.BIG?.length)).toEqual([100_000, 100_000, 100_000]);
});

test("the array's row is purged with its last task", () => {
  const store = new JobStore(openDb(":memory:"));
  store.tx(() => store.insertArray(values, [1, 2], "1-2"));
  store.markEnded(1, "COMPLETED", 2000, 0, null);
  expect(store.purgeEnded(10_000)).toBe(1);
  expect(store.arrayOf(1)).toBeDefined();
  expect(store.getJob(2)!.script).toBe(values.script);
  store.markEnded(2, "COMPLETED", 3000, 0, null);
  expect(store.purgeEnded(10_000)).toBe(1);
  expect(store.arrayOf(1)).toBeUndefined();
});

test("an array's tasks are copied in task order, and each task but the first gets the event naming it", () => {
  const store = new JobStore(openDb(":memory:"));
  const tasks = [3, 1000, 7, 9];
  const ids = store.tx(() => store.insertArray(values, tasks, "3,7,9,1000"));
  expect(ids.map((id) => store.getJob(id)!.arrayTaskId)).toEqual(tasks);
  expect(ids.map((id) => store.getJob(id)!.arrayJobId)).toEqual(ids.map(() => ids[0]!));
  store.addTaskEvents(ids[0]!, 5, "submitted", "submitted: task {task} of an array of 4 batch jobs, {task} stays");
  expect(store.eventsOf(ids[0]!)).toEqual([]);
  expect(ids.slice(1).map((id) => store.eventsOf(id).map((e) => `${e.time} ${e.kind} ${e.message}`))).toEqual(
    tasks.slice(1).map((t) => [`5 submitted submitted: task ${ids[0]}_${t} of an array of 4 batch jobs, {task} stays`]),
  );
});
