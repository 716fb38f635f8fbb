import { z } from "zod";

export const JobId = z.int().positive();
export const StepKey = z.string().regex(/^\d+\.\d+$/, "must be JOB.STEP");
export const NodeRef = z.object({ name: z.string().min(1), addr: z.string().min(1) });
export type NodeRef = z.infer<typeof NodeRef>;
export const Signal = z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCONT", "SIGSTOP"]);
export type Signal = z.infer<typeof Signal>;

/** A step credential: the controller's HMAC over job, step, node list and expiry (see credential.ts). */
export const Credential = z.lazy(() =>
  z.object({
    jobId: JobId,
    stepId: z.int().nonnegative(),
    nodes: z.array(z.string()),
    /** Epoch ms; a credential lives seconds. */
    expires: z.number(),
    /** What the step may run, when the credential covers it: sha256 of argv, sha256 of the environment, the working directory. */
    argv: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    env: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    cwd: z.string().optional(),
    /** "adopt": re-attaches the listed nodes of a running step to a new parent (no launch); absent: a launch. */
    use: z.literal("adopt").optional(),
    sig: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);
export type Credential = z.infer<typeof Credential>;

export function stepKey(jobId: number, stepId: number): string {
  return `${jobId}.${stepId}`;
}
