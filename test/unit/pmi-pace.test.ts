import { expect, test } from "bun:test";
import { PmiPaces } from "../../src/roles/agent/pmi-pace.ts";

// The pace protects a node's other users: it holds while one of them has a job on the node, and
// a user alone there is read as fast as he sends (a large job's PMI wire-up is not slowed).

test("a user past his burst waits while another user has a job on the node", () => {
  const pace = new PmiPaces(() => true, 1000, 5000).of("bob", "1.0");
  expect(pace(5000)).toBe(0);
  expect(pace(1000)).toBeGreaterThan(0);
});

test("alone on the node he never waits, and owes nothing once another user comes", () => {
  let shared = false;
  const pace = new PmiPaces(() => shared, 1000, 5000).of("bob", "1.0");
  for (let i = 0; i < 100; i++) expect(pace(5000)).toBe(0);
  shared = true;
  // His debt was forgiven as he went: the next read waits only for itself (~1 s at 1,000 a second), not for 500 kB.
  const wait = pace(1000);
  expect(wait).toBeGreaterThan(0);
  expect(wait).toBeLessThanOrEqual(1001);
});
