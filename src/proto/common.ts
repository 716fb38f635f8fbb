import { z } from "zod";

export const JobId = z.int().positive();
export const StepKey = z.string().regex(/^\d+\.\d+$/, "must be JOB.STEP");
export const NodeRef = z.object({ name: z.string().min(1), addr: z.string().min(1) });
export type NodeRef = z.infer<typeof NodeRef>;
export const Signal = z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCONT", "SIGSTOP"]);
export type Signal = z.infer<typeof Signal>;

/** Why `v` is not an object of strings (undefined: it is). */
function notStringRecord(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return `expected an object of strings, got ${v === null ? "null" : Array.isArray(v) ? "an array" : typeof v}`;
  for (const k of Object.keys(v)) {
    if (k === "__proto__") return "the name __proto__ is not allowed";
    const x = (v as Record<string, unknown>)[k];
    if (typeof x !== "string") return `${JSON.stringify(k).slice(0, 100)}: expected a string, got ${x === null ? "null" : Array.isArray(x) ? "an array" : typeof x}`;
  }
  return undefined;
}

export const isStringRecord = (v: unknown): v is Record<string, string> => notStringRecord(v) === undefined;

/**
 * An object of strings (an environment, a KVS), checked in one pass: as z.record(z.string(),
 * z.string()), but one check per object, not two zod runs per entry. The agent parses its messages
 * interpreted (util/jit.ts), where z.record cost ~1 µs an entry: a null job's start message (18
 * job variables) spent a third of its ~70 µs parse there. The object itself is passed on, not a copy.
 */
export const StringRecord = z.custom<Record<string, string>>(isStringRecord, { error: (iss) => notStringRecord(iss.input) });

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

/** A step's name in messages and maps: "JOB.STEP", as Slurm writes it. */
export function stepKey(jobId: number, stepId: number): string {
  return `${jobId}.${stepId}`;
}
