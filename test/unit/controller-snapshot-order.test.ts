/**
 * A pass's snapshot lists the nodes in name order (node2 before node10) and says so (namesSorted),
 * whatever order they registered in; a node that registers later takes its place in that order.
 */
import { expect, test } from "bun:test";
import { ControllerHarness } from "../support/controller-harness.ts";

test("the snapshot's nodes are in name order, a node registered later among them", () => {
  const h = new ControllerHarness(0);
  for (const name of ["node10", "node2", "node1"]) h.addNode(name);
  const names = () => h.snapshots.take(Date.now(), false).nodes.map((n) => n.name);
  expect(h.snapshots.take(Date.now(), false).namesSorted).toBe(true);
  expect(names()).toEqual(["node1", "node2", "node10"]);
  h.addNode("node3");
  expect(names()).toEqual(["node1", "node2", "node3", "node10"]);
  // A pass places on them as a sorted list: a one-node job on the first idle node by name.
  const id = h.submit({ nodes: 1, exclusive: true });
  h.scheduler.pass();
  expect(h.state.jobs.get(id)!.nodes).toEqual(["node1"]);
});
