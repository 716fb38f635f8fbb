/** Launcher (`ebb run`) <-> controller messages, over /v1/launcher (Bearer: API token or job token). */
import { z } from "zod";
import { JobId } from "./common.ts";

export const LauncherToController = z.discriminatedUnion("t", [
  z.object({ t: z.literal("attach"), jobId: JobId }),
  z.object({ t: z.literal("step.end"), jobId: JobId, stepId: z.int().nonnegative(), exitCode: z.int(), message: z.string().optional() }),
  /** An `ebb run` that created its own allocation gives it back with the step's exit code. */
  z.object({ t: z.literal("release"), jobId: JobId, exitCode: z.int(), message: z.string().optional(), lostNode: z.string().optional() }),
]);
export type LauncherToController = z.infer<typeof LauncherToController>;

export const ControllerToLauncher = z.discriminatedUnion("t", [
  z.object({ t: z.literal("job.state"), jobId: JobId, state: z.string(), reason: z.string().optional(), nodes: z.array(z.string()) }),
  z.object({ t: z.literal("error"), message: z.string() }),
]);
export type ControllerToLauncher = z.infer<typeof ControllerToLauncher>;
