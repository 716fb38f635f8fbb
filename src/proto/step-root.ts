/**
 * Controller -> a step root process it starts on its own host (`ebb step-root`, hidden): what the
 * root of an elastic command job's step needs, as one JSON document on the process's stdin.
 */
import { z } from "zod";
import { JobStart } from "./agent.ts";

/** The most a step root's start may be (the job's argv and environment are capped far below it by the API). */
export const MAX_STEP_ROOT_START_BYTES = 16 << 20;

export const StepRootStart = z.object({
  /** The controller's URL, as seen from its own host. */
  controller: z.url(),
  /** In a TLS cluster: the cluster CA (PEM), trusted for the controller and the agents' step ports. */
  ca: z.string().optional(),
  fanout: z.int().positive(),
  job: JobStart,
});
export type StepRootStart = z.infer<typeof StepRootStart>;
