/**
 * Type-level checks of EPOP programs: `tsc --noEmit` (part of `npm test`) fails if any line
 * marked @ts-expect-error compiles, i.e. if the types stop refusing these mistakes.
 */
import { expect, test } from "bun:test";
import { defineProgram, type Phase, type Program } from "../../src/epop/index.ts";

type D = { x: number };

test("phases that forget loop or return the wrong thing do not compile", () => {
  const good: Phase<D>[] = [
    { kind: "rigid", name: "r", exec: (d) => void (d.x += 1) },
    { kind: "elastic", name: "e", exec: () => {}, adapt: () => {}, loop: (d) => d.x < 3 },
    { kind: "branch", name: "b", next: (_, pc) => pc + 1 },
  ];
  // @ts-expect-error an elastic phase must have a loop condition
  const noLoop: Phase<D> = { kind: "elastic", name: "e", exec: () => {}, adapt: () => {} };
  // @ts-expect-error an elastic phase must have an adapt block
  const noAdapt: Phase<D> = { kind: "elastic", name: "e", exec: () => {}, loop: () => false };
  // @ts-expect-error loop returns a boolean, not a count
  const countLoop: Phase<D> = { kind: "rigid", name: "r", exec: () => {}, loop: (d) => d.x };
  // @ts-expect-error a branch returns a program counter or a phase name
  const boolBranch: Phase<D> = { kind: "branch", name: "b", next: () => true };
  // @ts-expect-error an unknown kind
  const other: Phase<D> = { kind: "loop", name: "l", exec: () => {} };
  // @ts-expect-error init must return the data block
  const badInit: Program<D> = defineProgram<D>({ name: "p", init: () => 5, phases: good });
  expect([noLoop, noAdapt, countLoop, boolBranch, other, badInit].length).toBe(6);
  expect(good).toHaveLength(3);
});
