/**
 * Views of a waiting job kept from pass to pass (a static policy's rigid view) carry the job's
 * priority of now: it moves with the clock and usage between passes, and the backfill order reads it.
 */
import { expect, test } from "bun:test";
import { rigid } from "../../src/sched/policies/common.ts";
import type { PendingJob } from "../../src/sched/types.ts";

test("a kept rigid view follows its job's priority from pass to pass", () => {
  const job: PendingJob = { id: 1, submitTime: 0, timeLimit: 600, minNodes: 2, maxNodes: 8, elastic: true, priority: 0.25 };
  const first = rigid(job);
  expect(first).not.toBe(job);
  expect(first.minNodes).toBe(8);
  expect(first.priority).toBe(0.25);
  job.priority = 0.75; // the next pass: the job aged
  const next = rigid(job);
  expect(next).toBe(first); // still the kept view
  expect(next.priority).toBe(0.75);
});
