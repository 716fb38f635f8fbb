/** The job states and their transitions: one list, and a final state is never left. */
import { expect, test } from "bun:test";
import { ACTIVE_STATES, FINAL_STATES, JOB_STATES, isActive, isFinal, mayBecome } from "../../src/domain/job.ts";

test("every state is active or final, never both", () => {
  expect([...ACTIVE_STATES, ...FINAL_STATES].sort()).toEqual([...JOB_STATES].sort());
  for (const s of JOB_STATES) expect(isActive(s)).toBe(!isFinal(s));
});

test("a final state is never left, and no state becomes PENDING again", () => {
  for (const from of FINAL_STATES) for (const to of JOB_STATES) expect(mayBecome(from, to)).toBe(false);
  for (const from of JOB_STATES) expect(mayBecome(from, "PENDING")).toBe(false);
});

test("a pending job starts or ends without running; it cannot time out or adapt", () => {
  expect(JOB_STATES.filter((to) => mayBecome("PENDING", to))).toEqual(["RUNNING", "FAILED", "CANCELLED"]);
});

test("running and adapting jobs go back and forth, and may end in any final state", () => {
  expect(mayBecome("RUNNING", "ADAPTING")).toBe(true);
  expect(mayBecome("ADAPTING", "RUNNING")).toBe(true);
  for (const to of FINAL_STATES) expect([mayBecome("RUNNING", to), mayBecome("ADAPTING", to)]).toEqual([true, true]);
});
