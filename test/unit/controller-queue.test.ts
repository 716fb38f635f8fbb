/**
 * The controller's queue (roles/controller/queue.ts) over the harness (no processes): fair share
 * charged live equals fair share rebuilt from the allocation history after a restart.
 */
import { expect, test } from "bun:test";
import { QueuePolicy } from "../../src/roles/controller/queue.ts";
import { Partitions } from "../../src/sched/partitions.ts";
import { resolvePriority } from "../../src/sched/priority.ts";
import type { JobState } from "../../src/sched/types.ts";
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

test("a running job gets the priority it would have if it waited now (ebb weighs its time by it); none with submit priority", () => {
  const h = new ControllerHarness(1);
  const t0 = Date.now() - 10 * H;
  const alice = h.submit({ nodes: 1, exclusive: true });
  h.pass(t0);
  h.by.user = "bob";
  const bob = h.submit({ nodes: 1, exclusive: true });
  const view = (id: number) => ({ id, nodes: 1, minNodes: 1, maxNodes: 1, elastic: false, submitTime: h.job(id)!.row.submitTime, startTime: t0, timeLimit: 3600, samples: [], adapting: false }) as JobState & { priority?: number };
  const live = new QueuePolicy(config(), h.state);
  live.restore(h.store, t0);
  const running = view(alice);
  const [waiting] = live.arrange([h.job(bob)!], t0 + H, [running]);
  // Alice used the node for an hour, bob nothing: her running job ranks below his waiting one.
  expect(running.priority).toBeGreaterThan(0);
  expect(waiting!.priority).toBeGreaterThan(running.priority!);
  // All the usage is hers, half the shares: fair share 2^-2 of the weight 10,000 (no age: submitted after t0).
  expect(running.priority).toBeCloseTo(2500, 6);
  const fifo = view(alice);
  new QueuePolicy({ ...config(), priority: resolvePriority({ type: "submit" }) }, h.state).arrange([h.job(bob)!], t0 + H, [fifo]);
  expect(fifo.priority).toBeUndefined();
});
