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
