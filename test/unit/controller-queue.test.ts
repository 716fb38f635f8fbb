/**
 * The controller's queue (roles/controller/queue.ts) over the harness (no processes): fair share
 * charged live equals fair share rebuilt from the allocation history after a restart.
 */
import { expect, test } from "bun:test";
import { QueuePolicy } from "../../src/roles/controller/queue.ts";
import { Partitions } from "../../src/sched/partitions.ts";
import { resolvePriority } from "../../src/sched/priority.ts";
import { ControllerHarness } from "../support/controller-harness.ts";

const H = 3_600_000;
const config = () => ({ priority: resolvePriority({ halfLife: 3600 }), partitions: new Partitions(), userLimits: {} });

test("usage charged pass by pass equals usage rebuilt from job_nodes at a restart", () => {
  const h = new ControllerHarness(2);
  const t0 = Date.now() - 10 * H;
  const whole = h.submit({ nodes: 1, exclusive: true });
  const small = h.submit({ tasks: 2 });
  h.pass(t0);
  expect([h.job(whole)!.row.state, h.job(small)!.row.state]).toEqual(["RUNNING", "RUNNING"]);
  const live = new QueuePolicy(config(), h.state);
  live.restore(h.store, t0);
  for (let k = 1; k <= 6; k++) live.charge(t0 + k * (H / 2));
  // A restart three hours in: the same usage from the history (rows still open: up to now).
  const again = new QueuePolicy(config(), h.state);
  again.restore(h.store, t0 + 3 * H);
  expect(again.usage.usage("alice", t0 + 3 * H)).toBeCloseTo(live.usage.usage("alice", t0 + 3 * H), 6);
  // Whole node (4 cores, its memory) and two cores with theirs: billing per second by the weights.
  const node = h.state.resources(h.state.nodes.get("n1")!);
  const rate = (4 + 2) * 1 + ((node.memMiB + h.job(small)!.shares[0]!.memMiB) / 1024) * 0.25;
  expect(live.usage.raw("alice")).toBeCloseTo(rate * 3 * 3600, 3);
});
