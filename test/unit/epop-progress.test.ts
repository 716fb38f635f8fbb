/** The controller's remaining-time estimate from EPOP progress, and `ebb show`'s phase list (pure). */
import { expect, test } from "bun:test";
import { programText } from "../../src/cli/show.ts";
import { remainingMs } from "../../src/roles/controller/program.ts";

test("time left = the current bounded phase's rate since it began, times the iterations left", () => {
  // 100 iterations in 10 s since the phase began at iteration 0: 900 left -> 90 s.
  expect(remainingMs({ pc: 1, iteration: 100, bound: 1000, phaseSince: 0, phaseStartIteration: 0 }, 10_000)).toBe(90_000);
  // A phase joined at iteration 50 counts from there.
  expect(remainingMs({ pc: 1, iteration: 150, bound: 250, phaseSince: 0, phaseStartIteration: 50 }, 20_000)).toBe(20_000);
  // No bound, no iteration done yet, or done: no estimate / zero.
  expect(remainingMs({ pc: 1, iteration: 10, phaseSince: 0, phaseStartIteration: 0 }, 1000)).toBeUndefined();
  expect(remainingMs({ pc: 1, iteration: 0, bound: 10, phaseSince: 0, phaseStartIteration: 0 }, 1000)).toBeUndefined();
  expect(remainingMs({ pc: 1, iteration: 10, bound: 10, phaseSince: 0, phaseStartIteration: 0 }, 1000)).toBe(0);
});

test("between reports the estimate counts down from the last one; a long silence slows the rate", () => {
  // Reported at 10 s: 100 of 1,000 done since 0 s, 100 ms an iteration: 90 s left then.
  const p = { pc: 1, iteration: 100, bound: 1000, phaseSince: 0, phaseStartIteration: 0, updated: 10_000 };
  expect(remainingMs(p, 10_000)).toBe(90_000);
  // 1.5 s on, no new report yet (they come at most once a second): 88.5 s, not 900 x 11.5 / 100 = 103.5 s.
  expect(remainingMs(p, 11_500)).toBe(88_500);
  // Few iterations done: a second between reports does not turn 149 s into 298 s.
  const early = { pc: 1, iteration: 1, bound: 150, phaseSince: 0, phaseStartIteration: 0, updated: 1000 };
  expect(remainingMs(early, 1900)).toBe(148_100);
  // Silent for 5 s, over twice the spacing of reports: the iteration under way is slower than 100 ms.
  expect(remainingMs(p, 15_000)).toBe(135_000);
});

test("the phase list marks the current phase and draws a bar for a bounded elastic one", () => {
  const phases = [
    { pc: 0, name: "init", kind: "init" as const },
    { pc: 1, name: "relax", kind: "elastic" as const },
    { pc: 2, name: "report", kind: "rigid" as const },
  ];
  expect(programText({ name: "jacobi", phases, pc: 1, iteration: 250, bound: 1000, remainingSeconds: 12.5 })).toBe(
    "\nProgram jacobi (EPOP):\n     0  init    init\n  >  1  elastic relax  [#####...............] 250/1000  ~12.5 s left\n     2  rigid   report\n",
  );
  expect(programText({ name: "p", phases, pc: 1, iteration: 7, bound: null, remainingSeconds: null })).toContain(">  1  elastic relax  iteration 7");
});
