/**
 * The API field `elasticSettings` (and the CLI's `--elastic-settings`), in a module of its own so
 * that the CLI, which checks the flag, does not build every API schema when it starts. Built at
 * its first use, like the wire messages (see proto/README.md).
 */
import { z } from "zod";

/**
 * Seconds between an elastic job's timing samples: the bounds of every input that sets it (the API,
 * run and submit's flag, the controller's flag and config file).
 */
export const SAMPLE_INTERVAL = { min: 0.1, max: 86_400 } as const;

/** An elastic job's own scheduler settings; the controller clamps them to its admin limits. */
export const ElasticSettings = z.lazy(() =>
  z.strictObject({
    /** MTCT above which the job is halved. */
    upper: z.number().positive().optional(),
    /** MTCT below which the job may double. */
    lower: z.number().nonnegative().optional(),
    /** Seconds of samples the trend is taken over. */
    window: z.number().positive().optional(),
    /** Samples needed after an adaptation before the job is resized again. */
    minSamples: z.int().min(1).optional(),
    /** Seconds after an adaptation before the job may adapt again. */
    settle: z.number().nonnegative().optional(),
    /** Grow only when the predicted gain exceeds the adaptation cost. */
    payoff: z.boolean().optional(),
  }),
);
export type ElasticSettings = z.infer<typeof ElasticSettings>;
