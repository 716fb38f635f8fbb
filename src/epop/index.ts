/**
 * ebb/epop: phase-oriented elastic programs (dissertation ch. 7) and their driver. See README.md.
 */
export { defineProgram, structureOf, validateProgram } from "./program.ts";
export type { BranchPhase, ElasticPhase, InitContext, Phase, PhaseContext, Program, RigidPhase, Structure, WorldLike } from "./program.ts";
export { drive, EpopError } from "./driver.ts";
export type { Counters, Env, Progress } from "./driver.ts";
export { runEpop } from "./run.ts";
export type { RunOptions } from "./run.ts";
export { epopWindow } from "./window.ts";
export type { EpopWindow } from "./window.ts";
