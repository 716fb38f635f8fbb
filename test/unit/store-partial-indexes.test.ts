/**
 * Indexes that hold only the rows their queries look for, so that a job's way through costs them
 * fewer page writes (issue 36): jobs_end only ended jobs (the purge and history's ranges),
 * jobs_array only array tasks, job_nodes_open only open allocations (by job, as a restart reads
 * them), plan_items_status only accepted items (what a restart abandons).
 * Their queries still find them.
 */
import { expect, test } from "bun:test";
import { openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { PlanStore } from "../../src/store/plans.ts";

/** Entries in an index's leaf pages (SQLite's dbstat). */
const entries = (store: JobStore, index: string) => (store.db.$client.query("select coalesce(sum(ncell), 0) as n from dbstat where name = ? and pagetype = 'leaf'").get(index) as { n: number }).n;
const job = { name: "j", kind: "command" as const, argv: ["true"], nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 1 };

test("jobs_end holds ended jobs only, and the purge still finds them", () => {
  const store = new JobStore(openDb(":memory:"));
  const ids = store.tx(() => [1, 2, 3].map(() => store.insertJob(job)));
  expect(entries(store, "jobs_end")).toBe(0);
  store.markEnded(ids[0]!, "COMPLETED", 1000, 0, null);
  expect(entries(store, "jobs_end")).toBe(1);
  expect(store.db.$client.query("explain query plan select id from jobs where end_time < 5000").all().map((r) => (r as { detail: string }).detail).join()).toContain("jobs_end");
  expect(store.purgeEnded(5000)).toBe(1);
  expect(store.listJobs({ limit: 10 }).map((r) => r.id)).toEqual(ids.slice(1));
});

test("plan_items_status holds accepted items only, and a restart still abandons them", () => {
  const store = new JobStore(openDb(":memory:"));
  const plans = new PlanStore(store.db);
  const id = store.tx(() => store.insertJob(job));
  const item = { jobId: id, kind: "start" as const, status: "accepted" as const, reason: "fits", detail: {} };
  const { itemIds } = plans.insert({ time: 1, policy: "ebb", reservations: [] }, [item, item, item]);
  plans.settle(itemIds[0]!, "done");
  expect(entries(store, "plan_items_status")).toBe(2);
  expect(plans.abandonUnsettled("the controller stopped")).toBe(2);
  expect(entries(store, "plan_items_status")).toBe(0);
});

test("jobs_array holds array tasks only, and an array's tasks are still found through it", () => {
  const store = new JobStore(openDb(":memory:"));
  store.tx(() => [1, 2].map(() => store.insertJob(job)));
  expect(entries(store, "jobs_array")).toBe(0);
  const tasks = store.tx(() => store.insertArray({ ...job, script: null }, [0, 1, 2], "0-2"));
  expect(entries(store, "jobs_array")).toBe(3);
  expect(store.db.$client.query("explain query plan select id from jobs where array_job_id = 3").all().map((r) => (r as { detail: string }).detail).join()).toContain("jobs_array");
  expect(store.arrayTaskIds(tasks[0]!)).toEqual(tasks);
  expect(store.listJobs({ ids: [tasks[0]!], limit: 10 }).map((r) => r.id)).toEqual(tasks);
});

test("job_nodes_open holds open allocations only; a restart still reads them back by job, in rank order", () => {
  const store = new JobStore(openDb(":memory:"));
  const [a, b] = store.tx(() => [1, 2].map(() => store.insertJob(job))) as [number, number];
  const share = (node: string) => ({ node, cores: [0], memMiB: 0, gpus: [] });
  store.openAllocation(b, [share("n2"), share("n1")], 10);
  store.openAllocation(a, [share("n3")], 10);
  expect(entries(store, "job_nodes_open")).toBe(3);
  store.closeAllocation(b, 20, ["n2"]);
  expect(entries(store, "job_nodes_open")).toBe(2);
  expect(store.openAllocations().map((r) => [r.jobId, r.node])).toEqual([
    [a, "n3"],
    [b, "n1"],
  ]);
  store.closeAllocation(a, 30);
  expect(entries(store, "job_nodes_open")).toBe(1);
  expect(store.usageSince(15).map((r) => [r.node, r.until])).toEqual([
    ["n2", 20],
    ["n1", null],
    ["n3", 30],
  ]);
});
