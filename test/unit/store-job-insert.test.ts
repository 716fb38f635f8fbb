/**
 * A new job's row holds every value it was submitted with: what a restarted controller reads back
 * (activeJobs) is what the running one had in memory. The insert named its columns one by one and
 * had left out --requeue, --signal, --open-mode=append and the program's report.
 */
import { expect, test } from "bun:test";
import { openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";

const values = {
  name: "x",
  kind: "batch" as const,
  argv: null,
  script: "#!/bin/sh\ntrue\n",
  args: ["a", "b"],
  nodes: 2,
  minNodes: 1,
  maxNodes: 2,
  elastic: true,
  tasks: 4,
  tasksPerNode: 2,
  overcommit: true,
  timeLimit: 60,
  env: { A: "1" },
  cwd: "/tmp",
  output: "o-%j",
  error: "e-%j",
  submitTime: 1000,
  sampleInterval: 1.5,
  held: true,
  beginTime: 2000,
  exclude: ["n1"],
  nodelist: ["n2"],
  sizes: [1, 2],
  user: "alice",
  submittedBy: 7,
  signal: { signal: "USR1", seconds: 60, batchOnly: true },
  requeue: true,
  appendOutput: true,
  program: { phase: "solve" },
  resources: { tasks: 4, cpusPerTask: 1, exclusive: false },
  partition: "p",
};

test("every value a job is submitted with is in its row", () => {
  const store = new JobStore(openDb(":memory:"));
  const id = store.tx(() => store.insertJob(values as never));
  const [row] = store.activeJobs(["PENDING"]);
  expect(row).toMatchObject({ ...values, id, state: "PENDING", restarts: 0, nextStep: 0, startTime: null, usage: null });
});

test("what a job is not submitted with gets the column's default", () => {
  const store = new JobStore(openDb(":memory:"));
  const id = store.tx(() => store.insertJob({ name: "y", kind: "alloc", nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 5, env: {}, cwd: "/", submitTime: 1 }));
  expect(store.getJob(id)).toMatchObject({ elastic: false, overcommit: false, held: false, requeue: false, appendOutput: false, restarts: 0, signal: null, program: null, dependency: null, output: null });
});
