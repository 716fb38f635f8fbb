import { expect, test } from "bun:test";
import { NORMAL_AFTER, TierUp } from "../../src/roles/agent/tier-up.ts";

test("the agent's thread turns to the normal JIT policy at its NORMAL_AFTER-th process, once", () => {
  let turned = 0;
  const t = new TierUp(NORMAL_AFTER, () => turned++);
  for (let i = 1; i < NORMAL_AFTER; i++) t.spawned();
  expect(turned).toBe(0);
  t.spawned();
  expect(turned).toBe(1);
  for (let i = 0; i < NORMAL_AFTER * 2; i++) t.spawned();
  expect(turned).toBe(1);
});
