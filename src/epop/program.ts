/**
 * EPOP programs (dissertation ch. 7): `{ init, phases }` over one data block. Phases hold no
 * state; the phase list is fixed once the program starts. Program counters: 0 is init, phase k
 * of the list is k + 1, and phases.length + 1 is the end.
 *
 * - rigid: `exec` once, or while `loop` says so (do-while, like the dissertation's driver);
 * - elastic: `exec` once per iteration while the mandatory `loop` holds; before each iteration
 *   the driver probes the resource manager and runs `adapt` inside the adaptation window when
 *   one is pending (joining ranks run it too, and then continue from that iteration);
 * - branch: `next` computes the program counter (a number, or a phase name); never init.
 *
 * W is the world handed to the blocks and X the adaptation window: `Comm` and `EpopWindow` when
 * run by runEpop; anything with a rank and a size in plain-data tests of the driver.
 */
import type { Comm } from "../comm/index.ts";
import type { EpopWindow } from "./window.ts";

export interface WorldLike {
  readonly rank: number;
  readonly size: number;
}

export interface PhaseContext<W extends WorldLike = Comm> {
  world: W;
  rank: number;
  size: number;
  /** The phase's name and program counter. */
  phase: string;
  pc: number;
  /** Iterations of this phase completed before this call (0 on the first exec). */
  iteration: number;
}

export interface InitContext<W extends WorldLike = Comm> {
  world: W;
  rank: number;
  size: number;
  /** True on a rank a grow started: its data is filled by the adapt block that follows. Init must not communicate. */
  joining: boolean;
}

type Block<D, C> = (data: D, ctx: C) => void | Promise<void>;

export interface RigidPhase<D, W extends WorldLike = Comm> {
  kind: "rigid";
  name: string;
  exec: Block<D, PhaseContext<W>>;
  /** Run exec again? Evaluated after each exec; without it the phase runs once. */
  loop?: (data: D, ctx: PhaseContext<W>) => boolean;
}

export interface ElasticPhase<D, W extends WorldLike = Comm, X = EpopWindow> {
  kind: "elastic";
  name: string;
  exec: Block<D, PhaseContext<W>>;
  /** Redistribute `data` inside the adaptation window, on old and joining ranks alike. */
  adapt: (data: D, window: X) => void | Promise<void>;
  /** Run another iteration? Evaluated after each exec; mandatory. */
  loop: (data: D, ctx: PhaseContext<W>) => boolean;
  /** The iteration count the phase will reach, when the program knows it (progress reports). */
  bound?: (data: D) => number;
}

export interface BranchPhase<D> {
  kind: "branch";
  name: string;
  /** The next program counter (1..phases.length + 1) or a phase name; `pc` is the branch's own. */
  next: (data: D, pc: number) => number | string;
}

export type Phase<D, W extends WorldLike = Comm, X = EpopWindow> = RigidPhase<D, W> | ElasticPhase<D, W, X> | BranchPhase<D>;

export interface Program<D, W extends WorldLike = Comm, X = EpopWindow> {
  name: string;
  init: (args: string[], ctx: InitContext<W>) => D | Promise<D>;
  phases: readonly Phase<D, W, X>[];
}

/** Identity, for inference: `defineProgram({ name, init: () => ({...}), phases: [...] })`. */
export function defineProgram<D, W extends WorldLike = Comm, X = EpopWindow>(p: Program<D, W, X>): Program<D, W, X> {
  return p;
}

/** The program's structure as the resource manager sees it (names and kinds, init at pc 0). */
export interface Structure {
  name: string;
  phases: { pc: number; name: string; kind: "init" | "rigid" | "elastic" | "branch" }[];
}

export function structureOf(p: { name: string; phases: readonly { name: string; kind: "rigid" | "elastic" | "branch" }[] }): Structure {
  return { name: p.name, phases: [{ pc: 0, name: "init", kind: "init" }, ...p.phases.map((ph, i) => ({ pc: i + 1, name: ph.name, kind: ph.kind }))] };
}

/** Checks what types cannot: names present and unique, kinds known, blocks are functions. */
export function validateProgram(p: Program<unknown, WorldLike, unknown>): void {
  if (!p || typeof p !== "object") throw new TypeError("program: must be an object { name, init, phases }");
  if (typeof p.name !== "string" || p.name === "") throw new TypeError("program.name: must be a non-empty string");
  if (typeof p.init !== "function") throw new TypeError("program.init: must be a function");
  if (!Array.isArray(p.phases) || p.phases.length === 0) throw new TypeError("program.phases: must be a non-empty array");
  const seen = new Set<string>(["init"]);
  p.phases.forEach((ph, i) => {
    const at = `program.phases[${i}]`;
    if (typeof ph?.name !== "string" || ph.name === "") throw new TypeError(`${at}.name: must be a non-empty string`);
    if (seen.has(ph.name)) throw new TypeError(`${at}.name: "${ph.name}" is ${ph.name === "init" ? "reserved" : "used twice"}`);
    seen.add(ph.name);
    const need = (k: string) => {
      if (typeof (ph as unknown as Record<string, unknown>)[k] !== "function") throw new TypeError(`${at}.${k}: phase "${ph.name}" (${ph.kind}) needs a function`);
    };
    if (ph.kind === "rigid") {
      need("exec");
      if (ph.loop !== undefined) need("loop");
    } else if (ph.kind === "elastic") ["exec", "adapt", "loop"].forEach(need);
    else if (ph.kind === "branch") need("next");
    else throw new TypeError(`${at}.kind: must be "rigid", "elastic" or "branch", got ${JSON.stringify((ph as { kind?: unknown }).kind)}`);
  });
}
