/**
 * Credentials derived from the cluster key, so agents can check them without asking the controller:
 * a step credential lets a launcher start ranks on exactly the listed nodes until it expires;
 * a job token lets processes of one job create steps in that job through the API.
 */
import type { AdoptCredential, Credential, StepCredential } from "./common.ts";

// Bun's hasher: about half node:crypto's CPU for these short texts, the same digests.
function hmac(key: string, text: string): string {
  return new Bun.CryptoHasher("sha256", key).update(text).digest("hex");
}

type Unsigned<C> = C extends unknown ? Omit<C, "sig"> : never;

function canonical(c: Unsigned<Credential>): string {
  const head = `${c.jobId}.${c.stepId}|${c.nodes.join(",")}|${c.expires}`;
  if ("use" in c) return `adopt|${head}`;
  return `step|${head}|${JSON.stringify([c.argv ?? null, c.env, c.jobEnv, c.cwd, c.output ?? null])}`;
}

/** What a step credential covers besides job, step, nodes and expiry. */
export type StepCovers = Pick<StepCredential, "argv" | "env" | "jobEnv" | "cwd" | "output">;

/** How long a step credential is valid: seconds, enough to carry a launch down the tree. */
export const CRED_LIFETIME_MS = 30_000;

const sha256 = (text: string) => Bun.CryptoHasher.hash("sha256", text, "hex");

/** The digest a credential carries for an argv. */
export const argvDigest = (argv: readonly string[]): string => sha256(JSON.stringify(argv));

/**
 * The digest a credential carries for an environment (order does not matter): its [name, value]
 * pairs by name. The names are sorted by the built-in order (UTF-16 code units, as `<` compares
 * them), not by a comparator of ours, which sort called ~500 times for a shell's 90 variables: ~8 µs
 * less per call of 12-20 (65 variables, alternating runs), on the controller, which signs, and on each
 * agent, which checks twice per launch (env and jobEnv).
 */
export const envDigest = (env: Record<string, string>): string => sha256(JSON.stringify(Object.keys(env).sort().map((k) => [k, env[k]])));

/** A file a node of the step writes its ranks' output to (StepSpec.outputFile). */
interface OutputFile {
  node: string;
  path: string;
  error?: string;
}

/** The digest a credential carries for a step's output file (undefined: the step has none). */
export const outputDigest = (o: OutputFile | undefined): string | undefined => (o === undefined ? undefined : sha256(JSON.stringify([o.node, o.path, o.error ?? null])));

/** Why a step does not match what its credential covers (undefined: it does), naming the credential's field. */
export function credentialMismatch(
  c: StepCredential,
  step: { argv: readonly string[]; apps?: unknown[]; env: Record<string, string>; jobEnv: Record<string, string>; cwd: string; outputFile?: OutputFile },
): string | undefined {
  const differs = (what: string, field: keyof StepCovers) => `the step's ${what} is not the one its credential was issued for (credential field ${field})`;
  if (c.argv !== undefined && (step.apps !== undefined || argvDigest(step.argv) !== c.argv)) return differs("argv", "argv");
  if (envDigest(step.env) !== c.env) return differs("environment", "env");
  if (envDigest(step.jobEnv) !== c.jobEnv) return differs("job environment", "jobEnv");
  if (step.cwd !== c.cwd) return differs("working directory", "cwd");
  if (outputDigest(step.outputFile) !== c.output) return differs("output file", "output");
  return undefined;
}

export function signCredential(key: string, c: Omit<StepCredential, "sig">): StepCredential;
export function signCredential(key: string, c: Omit<AdoptCredential, "sig">): AdoptCredential;
export function signCredential(key: string, c: Unsigned<Credential>): Credential {
  return { ...c, sig: hmac(key, canonical(c)) } as Credential;
}

/** Why a credential is not valid (undefined: it is); `signatureOnly`: only whether the cluster key signed it. */
export function verifyCredential(key: string, c: Credential, now = Date.now(), opts: { signatureOnly?: boolean } = {}): string | undefined {
  if (!safeEqual(c.sig, hmac(key, canonical(c)))) return "bad step credential signature";
  if (opts.signatureOnly) return undefined;
  return expiryRefusal(c, now);
}

/** "step credential expired" when it is, else undefined (the signature is another check). */
export function expiryRefusal(c: Credential, now = Date.now()): string | undefined {
  return c.expires < now ? "step credential expired" : undefined;
}

const JOB_TOKEN_PREFIX = "job.";

export function jobToken(key: string, jobId: number): string {
  return `${JOB_TOKEN_PREFIX}${jobId}.${hmac(key, `job|${jobId}`)}`;
}

/** The job id a job token is valid for, or undefined. */
export function verifyJobToken(key: string, token: string): number | undefined {
  const m = /^job\.(\d+)\.([0-9a-f]{64})$/.exec(token);
  if (!m) return undefined;
  const id = Number(m[1]);
  return safeEqual(m[2]!, hmac(key, `job|${id}`)) ? id : undefined;
}

// Bun's global crypto has node:crypto's timingSafeEqual: importing node:crypto (with node:tls,
// ~20 ms of CPU in the compiled ebb) is for the processes that need more of it, not every client.
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
