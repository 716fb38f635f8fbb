/**
 * Credentials derived from the cluster key, so agents can check them without asking the controller:
 * a step credential lets a launcher start ranks on exactly the listed nodes until it expires;
 * a job token lets processes of one job create steps in that job through the API.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Credential } from "./common.ts";

function hmac(key: string, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex");
}

function canonical(c: Omit<Credential, "sig">): string {
  return `step|${c.jobId}.${c.stepId}|${c.nodes.join(",")}|${c.expires}`;
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
