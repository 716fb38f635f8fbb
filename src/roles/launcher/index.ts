/**
 * The launcher's public entry: what another role needs to host a step root (the agent does, for
 * a command job whose first node it is): a launch (`Launch`, which runs a `StepRoot` for its step
 * and for each step its ranks spawn), the job's link to the controller, and a sink writing whole lines.
 * Other roles import the launcher through this file only (test/unit/layers.test.ts).
 */
export { ControllerLink } from "./controller-link.ts";
export { commandLaunch, isCommandStart, Launch } from "./launch.ts";
export { lineSink, type FlushableSink } from "./output.ts";
export { StepRoot } from "./step-root.ts";
