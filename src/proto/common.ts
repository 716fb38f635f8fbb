import { z } from "zod";

export const JobId = z.int().positive();
export const StepKey = z.string().regex(/^\d+\.\d+$/, "must be JOB.STEP");
export const NodeRef = z.object({ name: z.string().min(1), addr: z.string().min(1) });
export type NodeRef = z.infer<typeof NodeRef>;
export const Signal = z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCONT", "SIGSTOP"]);
export type Signal = z.infer<typeof Signal>;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "must be a sha256 in hex");

/** What every credential names: job, step, nodes and expiry (epoch ms; a credential lives seconds). */
const credentialBase = () => ({ jobId: JobId, stepId: z.int().nonnegative(), nodes: z.array(z.string()), expires: z.number(), sig: Sha256 });

/**
 * A step credential: the controller's HMAC over job, step, nodes, expiry and everything the agents
 * act on (see credential.ts): sha256 of the argv (absent for a spawn, whose argv may be several
 * programs), of the environment, of the job environment, the working directory, and sha256 of the
 * output file a node writes itself (absent: none).
 */
export const StepCredential = z.lazy(() =>
  z.object({ ...credentialBase(), argv: Sha256.optional(), env: Sha256, jobEnv: Sha256, cwd: z.string().min(1), output: Sha256.optional() }),
);
export type StepCredential = z.infer<typeof StepCredential>;

/** An adoption credential: re-attaches the listed nodes of a running step to a new parent (no launch). */
export const AdoptCredential = z.lazy(() => z.object({ ...credentialBase(), use: z.literal("adopt") }));
export type AdoptCredential = z.infer<typeof AdoptCredential>;

export type Credential = StepCredential | AdoptCredential;

export function stepKey(jobId: number, stepId: number): string {
  return `${jobId}.${stepId}`;
}
