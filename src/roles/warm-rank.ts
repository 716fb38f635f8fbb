/**
 * A warm rank (`ebb warm-rank`, started by an agent, never by a user): a process with the runtime
 * up and ebb/comm loaded that waits, owned by no job, until the agent hands it a rank to run. The
 * agent starts it with an empty environment, in `/`, in its own cgroup, with nothing of any user's;
 * when a step claims it, the agent moves it into the job's cgroup and binds it to the rank's CPUs,
 * then writes the claim (one JSON object, `WarmClaim`) on its stdin and closes it. Only then does
 * anything of the user's reach it: it becomes the user (groups, gid, uid: all ids, every thread,
 * no capabilities left), takes the job's environment, enters the job's directory with the user's
 * rights, and runs the program as `ebb exec FILE ARGS` does. EOF without a claim: it exits.
 * Protocol and its safety: roles/agent/README.md ("Warm ranks").
 */
import { mark } from "../util/trace.ts";
import { readFileSync, readdirSync } from "node:fs";
import { UMASK_VAR, umaskOf } from "./job-umask.ts";
import { RLIMIT_NPROC, USER_PROCS } from "./user-procs.ts";
import { isFile, registerEmbedded, runProgram } from "./program.ts";
import { prewarm } from "./warm-prewarm.ts";

/** What the agent writes on a warm rank's stdin (the only message of the protocol). */
export interface WarmClaim {
  /** Whom to become (the agent is root); absent: stay the agent's user. */
  as?: { uid: number; gid: number; groups: number[] };
  cwd: string;
  env: Record<string, string>;
  file: string;
  args: string[];
}

/** A claim is the agent's and bounded by it (argv and environment); this only guards a broken pipe's garbage. */
const MAX_CLAIM_BYTES = 16 << 20;

async function readClaim(): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of Bun.stdin.stream()) {
    size += chunk.length;
    if (size > MAX_CLAIM_BYTES) fail(`the claim is larger than ${MAX_CLAIM_BYTES} bytes`, 126);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const isId = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 32;
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");

/** The claim, checked field by field; undefined for an empty stdin (the agent let this rank go). */
export function parseClaim(text: string): WarmClaim | undefined {
  if (text.trim() === "") return undefined;
  const c = JSON.parse(text) as Partial<WarmClaim>;
  const as = c.as;
  if (as !== undefined && !(isId(as.uid) && isId(as.gid) && Array.isArray(as.groups) && as.groups.every(isId))) throw new Error("as: uid, gid and groups must be ids");
  if (typeof c.cwd !== "string" || typeof c.file !== "string" || !isStrings(c.args)) throw new Error("cwd, file and args must be strings");
  if (typeof c.env !== "object" || c.env === null || !Object.values(c.env).every((v) => typeof v === "string")) throw new Error("env must map names to strings");
  return { as, cwd: c.cwd, env: c.env, file: c.file, args: c.args };
}

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

type Libc = {
  clearenv(): number;
  setenv(name: Uint8Array, value: Uint8Array, overwrite: number): number;
  prctl(option: number, arg: number, a: number, b: number, c: number): number;
  setrlimit(resource: number, limit: BigUint64Array): number;
};

async function libc(): Promise<Libc> {
  const { dlopen, FFIType } = await import("bun:ffi");
  const { i32, u64, ptr } = FFIType;
  return dlopen("libc.so.6", {
    clearenv: { args: [], returns: i32 },
    setenv: { args: [ptr, ptr, i32], returns: i32 },
    prctl: { args: [i32, u64, u64, u64, u64], returns: i32 },
    setrlimit: { args: [i32, ptr], returns: i32 },
  }).symbols as unknown as Libc;
}

const PR_SET_DUMPABLE = 4;

/**
 * Becomes `as` for good: supplementary groups, gid, uid (glibc sets them on every thread; from
 * root, the kernel clears every capability once no id is 0). Checked on every thread after.
 * The kernel marks a process whose ids changed not dumpable (its /proc files root's, no ptrace by
 * the user); a cold start's exec of the program as the user makes it dumpable again, and so does this:
 * nothing of root's is in it (it read nothing but its own modules and the claim).
 */
function become(as: NonNullable<WarmClaim["as"]>, lib: Libc): void {
  const p = process as unknown as { setgroups(g: number[]): void; setgid(g: number): void; setuid(u: number): void };
  p.setgroups(as.groups.length > 0 ? as.groups : [as.gid]);
  p.setgid(as.gid);
  p.setuid(as.uid);
  for (const task of readdirSync("/proc/self/task")) {
    const status = readFileSync(`/proc/self/task/${task}/status`, "utf8");
    const ids = (name: string) => (new RegExp(`^${name}:\\s+(.*)$`, "m").exec(status)?.[1] ?? "").split(/\s+/);
    if (ids("Uid").some((u) => u !== String(as.uid)) || ids("Gid").some((g) => g !== String(as.gid)) || !/^CapEff:\s+0+$/m.test(status) || !/^CapPrm:\s+0+$/m.test(status))
      fail(`ebb warm rank: thread ${task} did not become uid ${as.uid} gid ${as.gid} without capabilities`, 126);
  }
  lib.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  // The user's process limit, as a cold start's shell sets it (lowering needs no privilege; a lower hard limit stays).
  lib.setrlimit(RLIMIT_NPROC, new BigUint64Array([BigInt(USER_PROCS), BigInt(USER_PROCS)]));
}

/**
 * The job's environment, wherever the runtime keeps one: the C environment (getenv, libraries),
 * process.env, and what Bun.spawn and Bun.spawnSync give a child by default, which otherwise is
 * the environment this process started with (none).
 */
function takeEnvironment(env: Record<string, string>, lib: Libc): void {
  const c = (s: string) => Buffer.from(`${s}\0`);
  lib.clearenv();
  for (const [k, v] of Object.entries(env)) lib.setenv(c(k), c(v), 1);
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, env);
  const bun = Bun as unknown as Record<"spawn" | "spawnSync", (a: unknown, b?: object) => unknown>;
  for (const name of ["spawn", "spawnSync"] as const) {
    const original = bun[name].bind(Bun);
    bun[name] = (a: unknown, b?: object) => (Array.isArray(a) ? original(a, { env: process.env, ...b }) : original({ env: process.env, ...(a as object) }));
  }
}

export async function serveWarmRank(): Promise<void> {
  // What every rank loads, before anything is known about the rank: the point of the pool.
  await import("../comm/index.ts");
  // ... and its PMI wire-up, run once against a stand-in, so that the rank finds that code compiled.
  await prewarm().catch((e: Error) => fail(`ebb warm rank: the warm-up failed: ${e.message}`, 126));
  const lib = await libc();
  // The program loader's mapping of ebb's own modules (Bun.plugin, ~0.3-0.8 ms of CPU): before the claim too.
  registerEmbedded();
  let claim: WarmClaim | undefined;
  try {
    claim = parseClaim(await readClaim());
  } catch (e) {
    fail(`ebb warm rank: bad claim: ${(e as Error).message}`, 126);
  }
  if (!claim) process.exit(0);
  if (claim.as) become(claim.as, lib);
  const { [UMASK_VAR]: _, ...env } = claim.env;
  takeEnvironment(env, lib);
  const mask = umaskOf(claim.env);
  if (mask !== undefined) process.umask(mask);
  mark("w.claimed-became-user");
  try {
    process.chdir(claim.cwd);
  } catch (e) {
    fail(`cd: ${claim.cwd}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "No such file or directory" : (e as Error).message}`, 126);
  }
  // From here on, exactly `ebb exec FILE ARGS` (cli/exec.ts), as the user.
  if (!isFile(claim.file)) fail(`ebb exec: ${claim.file}: no such file`, 1);
  await runProgram(claim.file, claim.args);
}
