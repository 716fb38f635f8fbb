/**
 * The plan applier's writes (issue 36): a pass's plan and all the starts it carries out are one
 * transaction, each start's item marked done there; the agents hear of the starts after it.
 */
import { expect, test } from "bun:test";
import { ControllerHarness } from "../support/controller-harness.ts";
import { PlanStore } from "../../src/store/plans.ts";

test("a pass that starts three jobs commits once: the plan, its items done, the jobs running; then each job's node is told", () => {
  const h = new ControllerHarness(2);
  const ids = [h.submit({}), h.submit({}), h.submit({ nodes: 1, exclusive: true })];
  let commits = 0;
  h.store.onCommit = () => commits++;
  h.pass();
  expect(commits).toBe(1);
  expect(ids.map((id) => h.job(id)?.row.state)).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
  const [plan] = new PlanStore(h.db).list({ limit: 1 });
  expect(plan!.items.map((i) => [i.jobId, i.kind, i.status])).toEqual(ids.map((id) => [id, "start", "done"]));
  expect(h.toAgents.filter((m) => m.msg.t === "job.start").map((m) => (m.msg as { job: { id: number } }).job.id)).toEqual(ids);
});
