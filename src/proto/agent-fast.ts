/**
 * The controller's per-job messages to an agent (job.start, shares, job.kill, job.ack), and the
 * agents' per-job messages to the controller (job.exit, job.cleaned, job.usage, heartbeat),
 * checked by hand: the same rules as their zod schemas in agent.ts, without zod's per-field calls
 * and allocations. The agent parses interpreted (util/jit.ts), where zod took ~140 µs of its
 * thread's CPU for a null job's job.start and ~50 µs for a shares (1,000 null jobs, 4 agents); the
 * controller's zod parse of a null job's job.exit and job.cleaned was ~2.5% of its CPU.
 *
 * Each returns the message zod would return, or undefined whenever it is not sure (anything
 * invalid, an elastic job, a field present as `undefined`): the zod schema then decides, so what is
 * refused and its error text are zod's. test/unit/proto-agent-fast.test.ts holds every field of
 * each against its schema.
 */
import type { JobStart, Share } from "./agent.ts";
import { isStringRecord, Signal, type NodeRef, type StepCredential } from "./common.ts";

type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);
/** z.int().nonnegative(); z.int() is a safe integer. */
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isJobId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
const isSha256 = (v: unknown): v is string => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
const isSignal = (v: unknown): v is Signal => typeof v === "string" && (Signal.options as readonly string[]).includes(v);

/** A copy of `v` when it is an array of at most `max` elements that each pass `ok`. */
function arrayOf<T>(v: unknown, ok: (x: unknown) => x is T, max = Infinity): T[] | undefined {
  if (!Array.isArray(v) || v.length > max) return undefined;
  for (const x of v) if (!ok(x)) return undefined;
  return v.slice();
}

const isString = (v: unknown): v is string => typeof v === "string";

/**
 * Copies the optional fields `keys` of `from` that pass their check into `to`; false when one is
 * present and fails, or is present as undefined (zod keeps such a key: left to zod).
 */
function optional(from: Raw, to: Raw, checks: Record<string, (v: unknown) => boolean>): boolean {
  for (const k in checks) {
    const v = from[k];
    if (v === undefined) {
      if (k in from) return false;
    } else if (checks[k]!(v)) to[k] = Array.isArray(v) ? v.slice() : v;
    else return false;
  }
  return true;
}

function credential(v: unknown): StepCredential | undefined {
  if (!isObject(v)) return undefined;
  const { jobId, stepId, expires, sig, env, jobEnv, cwd } = v;
  if (!isJobId(jobId) || !isNat(stepId) || typeof expires !== "number" || !Number.isFinite(expires) || !isSha256(sig)) return undefined;
  if (!isSha256(env) || !isSha256(jobEnv) || typeof cwd !== "string" || cwd.length < 1) return undefined;
  const nodes = arrayOf(v.nodes, isString);
  if (!nodes) return undefined;
  const out: Raw = { jobId, stepId, nodes, expires, sig };
  if (!optional(v, out, { argv: isSha256 })) return undefined;
  Object.assign(out, { env, jobEnv, cwd });
  return optional(v, out, { output: isSha256 }) ? (out as StepCredential) : undefined;
}

const isNodeRef = (v: unknown): v is NodeRef => isObject(v) && typeof v.name === "string" && v.name.length >= 1 && typeof v.addr === "string" && v.addr.length >= 1;

function jobStart(v: unknown): JobStart | undefined {
  if (!isObject(v) || "elastic" in v) return undefined;
  const { id, kind, name, env, cwd, output, jobEnv } = v;
  if (!isJobId(id) || (kind !== "batch" && kind !== "command") || typeof name !== "string" || typeof cwd !== "string" || typeof output !== "string") return undefined;
  if (!isStringRecord(env) || !isStringRecord(jobEnv)) return undefined;
  const tasks = arrayOf(v.tasks, isNat);
  if (!Array.isArray(v.nodes) || v.nodes.length < 1 || !v.nodes.every(isNodeRef) || !tasks) return undefined;
  const out: Raw = { id, kind, name };
  if (!optional(v, out, { argv: (x) => arrayOf(x, isString) !== undefined, script: isString, args: (x) => arrayOf(x, isString) !== undefined })) return undefined;
  Object.assign(out, { env, cwd, output });
  if (!optional(v, out, { error: isString })) return undefined;
  // NodeRef strips what it does not know, as its zod object does.
  Object.assign(out, { nodes: v.nodes.map((n: NodeRef) => ({ name: n.name, addr: n.addr })), tasks, jobEnv });
  if (v.cred !== undefined) {
    const cred = credential(v.cred);
    if (!cred) return undefined;
    out.cred = cred;
  } else if ("cred" in v) return undefined;
  const positive = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x > 0;
  const ok = optional(v, out, { user: isString, run: isNat, append: (x) => typeof x === "boolean", sampleInterval: positive });
  return ok ? (out as JobStart) : undefined;
}

function share(v: unknown): Share | undefined {
  if (!isObject(v) || !isNat(v.memMiB)) return undefined;
  const cores = arrayOf(v.cores, isNat, 65536);
  const gpus = arrayOf(v.gpus, isNat, 1024);
  return cores && gpus ? { cores, memMiB: v.memMiB, gpus } : undefined;
}

type ShareEntry = { jobId: number; user: string | null; share: Share };

function shareEntry(v: unknown): ShareEntry | undefined {
  if (!isObject(v) || !isJobId(v.jobId) || (typeof v.user !== "string" && v.user !== null)) return undefined;
  const s = share(v.share);
  return s ? { jobId: v.jobId, user: v.user, share: s } : undefined;
}

/** Per kind: the message as its schema parses it, or undefined (the schema decides). */
export const fastControllerToAgent = {
  "job.start": (v: Raw): { t: "job.start"; job: JobStart } | undefined => {
    const job = jobStart(v.job);
    return job && { t: "job.start", job };
  },
  "shares": (v: Raw): { t: "shares"; jobs: ShareEntry[] } | undefined => {
    if (!Array.isArray(v.jobs) || v.jobs.length > 4096) return undefined;
    const jobs: ShareEntry[] = [];
    for (const x of v.jobs) {
      const e = shareEntry(x);
      if (!e) return undefined;
      jobs.push(e);
    }
    return { t: "shares", jobs };
  },
  "job.kill": (v: Raw): { t: "job.kill"; jobId: number; signal: Signal; reason?: string; confirm?: boolean } | undefined => {
    if (!isJobId(v.jobId) || !isSignal(v.signal)) return undefined;
    const out: Raw = { t: "job.kill", jobId: v.jobId, signal: v.signal };
    return optional(v, out, { reason: isString, confirm: (x) => typeof x === "boolean" }) ? (out as { t: "job.kill"; jobId: number; signal: Signal }) : undefined;
  },
  "job.ack": (v: Raw): { t: "job.ack"; jobId: number } | undefined => (isJobId(v.jobId) ? { t: "job.ack", jobId: v.jobId } : undefined),
};

/** z.number().nonnegative(): finite (zod's number refuses NaN and the infinities) and >= 0. */
const isAmount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

type Usage = { cpuSec: number; peakMemMiB: number; oomKills: number };

function usage(v: unknown): Usage | undefined {
  if (!isObject(v) || !isAmount(v.cpuSec) || !isAmount(v.peakMemMiB) || !isNat(v.oomKills)) return undefined;
  return { cpuSec: v.cpuSec, peakMemMiB: v.peakMemMiB, oomKills: v.oomKills };
}

type Exit = { t: "job.exit"; jobId: number; exitCode: number; message?: string; lostNode?: string; run?: number; usage?: Usage; gone?: boolean };

/** Per kind: the message as its schema parses it, or undefined (the schema decides). */
export const fastAgentToController = {
  "job.exit": (v: Raw): Exit | undefined => {
    if (!isJobId(v.jobId) || !Number.isSafeInteger(v.exitCode)) return undefined;
    const out: Raw = { t: "job.exit", jobId: v.jobId, exitCode: v.exitCode };
    if (!optional(v, out, { message: isString, lostNode: isString, run: isNat })) return undefined;
    if (v.usage !== undefined) {
      const u = usage(v.usage);
      if (!u) return undefined;
      out.usage = u;
    } else if ("usage" in v) return undefined;
    return optional(v, out, { gone: (x) => typeof x === "boolean" }) ? (out as Exit) : undefined;
  },
  "job.cleaned": (v: Raw): { t: "job.cleaned"; jobId: number } | undefined => (isJobId(v.jobId) ? { t: "job.cleaned", jobId: v.jobId } : undefined),
  "job.usage": (v: Raw): ({ t: "job.usage"; jobId: number } & Usage) | undefined => {
    const u = isJobId(v.jobId) ? usage(v) : undefined;
    return u && { t: "job.usage", jobId: v.jobId as number, ...u };
  },
  "heartbeat": (v: Raw): { t: "heartbeat"; jobs: number[] } | undefined => {
    const jobs = arrayOf(v.jobs, isJobId);
    return jobs && { t: "heartbeat", jobs };
  },
};
