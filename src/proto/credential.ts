/**
 * Credentials derived from the cluster key, so agents can check them without asking the controller:
 * a step credential lets a launcher start ranks on exactly the listed nodes until it expires;
 * a job token lets processes of one job create steps in that job through the API.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Credential } from "./common.ts";

function hmac(key: string, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex");
}

function canonical(c: Omit<Credential, "sig">): string {
  const covers = c.argv !== undefined || c.env !== undefined || c.cwd !== undefined ? `|${JSON.stringify([c.argv ?? null, c.env ?? null, c.cwd ?? null])}` : "";
  return `${c.use ?? "step"}|${c.jobId}.${c.stepId}|${c.nodes.join(",")}|${c.expires}${covers}`;
}

/** How long a step credential is valid: seconds, enough to carry a launch down the tree. */
export const CRED_LIFETIME_MS = 30_000;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The digest a credential carries for an argv. */
export const argvDigest = (argv: readonly string[]): string => sha256(JSON.stringify(argv));

/** The digest a credential carries for an environment (order does not matter). */
export const envDigest = (env: Record<string, string>): string => sha256(JSON.stringify(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

/** Why a step does not match what its credential covers (undefined: it does). */
export function credentialMismatch(c: Credential, step: { argv: readonly string[]; apps?: unknown[]; env: Record<string, string>; cwd: string }): string | undefined {
  if (c.argv !== undefined && (step.apps !== undefined || argvDigest(step.argv) !== c.argv)) return "the step's argv is not the one its credential was issued for";
  if (c.env !== undefined && envDigest(step.env) !== c.env) return "the step's environment is not the one its credential was issued for";
  if (c.cwd !== undefined && step.cwd !== c.cwd) return "the step's working directory is not the one its credential was issued for";
  return undefined;
}

export function signCredential(key: string, c: Omit<Credential, "sig">): Credential {
  return { ...c, sig: hmac(key, canonical(c)) };
}

/** Why a credential is not valid (undefined: it is); `signatureOnly`: only whether the cluster key signed it. */
export function verifyCredential(key: string, c: Credential, now = Date.now(), opts: { signatureOnly?: boolean } = {}): string | undefined {
  if (!safeEqual(c.sig, hmac(key, canonical(c)))) return "bad step credential signature";
  if (opts.signatureOnly) return undefined;
  if (c.expires < now) return "step credential expired";
  return undefined;
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

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
