/**
 * A pass first records what its turn queued for a transaction of its own (agents' reports,
 * submissions: the controller's `gather`), so that it sees them, and the passes they ask for join
 * it instead of running one more pass in the next turn.
 */
import { expect, test } from "bun:test";
import { SchedulerLoop } from "../../src/roles/controller/scheduler.ts";
import { ControllerHarness } from "../support/controller-harness.ts";

test("a submission queued after the pass was asked for is recorded and started by that pass, and its request joins it", async () => {
  const h = new ControllerHarness(2);
  let passes = 0;
  const loop: SchedulerLoop = new SchedulerLoop(h.state, h.snapshots, h.applier, {
    // What the controller's effects do: an accepted submission asks for a pass.
    gather: () => {
      h.jobs.acceptQueued();
      loop.request();
    },
    passTook: () => passes++,
  });
  loop.request();
  const answer = h.jobs.submitSoon({ cwd: "/tmp", argv: ["true"] } as never, h.by);
  const { id } = await answer;
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  expect(h.job(id)?.row.state).toBe("RUNNING");
  expect(passes).toBe(1);
});
