/**
 * The controller's allocator setting. Bun's allocator (mimalloc) gives freed memory back to the
 * OS 100 ms after it is freed (its `purge_delay`); with MIMALLOC_PURGE_DELAY=-1 it keeps it for
 * reuse and does no purging at all, and the controller spent 0.59-0.86x the CPU per null job
 * (README, "How it is built"; issue 36); a finite delay (1, 3, 10, 30 s) kept little of that.
 * `ebb up` runs the controller, so it starts the same way (its agents share the setting); `ebb
 * agent` does not: its resident memory must fall back after steps that filled its PMI KVS (bench
 * pmi-memory), which with the setting it did not. Nor did its own CPU a null job gain from it
 * (bench/_ab-agent-own.ts, 400 jobs, median of 4 ABBA rounds' ratios against the default): -1,
 * 1.02x root's jobs and 1.15x a user's (load 11-25); a 1 s delay, 1.11x and 0.85x (load 26-33,
 * rounds one way and the other: noise).
 *
 * mimalloc reads MIMALLOC_PURGE_DELAY once, when the process starts; so the process executes
 * itself again with it added, before any other module of ebb runs: execve keeps the pid, argv,
 * stdio, working directory, signal dispositions and every descriptor not marked close-on-exec.
 * Not when the variable is set already (a user's value, or this is the second start), nor with
 * EBB_REEXEC=0.
 *
 * The controller also starts again without JavaScriptCore's top tier, FTL (BUN_JSC_useFTLJIT=0,
 * unless the environment sets it): its JIT threads went on compiling over its first ~3,000 null
 * jobs (0.5-0.65 ms of CPU a job over the first 1,000, 0.15-0.2 over the third; without FTL 0.4
 * and 0.05), for glue code run once or twice a job (SQLite, JSON, sockets, short loops) where the
 * tier below, DFG, left its own thread no slower that we could measure. Without FTL the
 * controller spent 0.91x (jobs 1-1,000) and 0.86x (1,001-2,000) the CPU per null job
 * (bench/_ab-null-jobs.ts, medians of 4 ABBA rounds, load 22-32), and 0.91x, 0.92x, 0.79x over
 * its first three thousands (4 rounds, load 19-29); over a 6,000-job run (2 rounds only, load
 * 19-25) 1.04x, 1.01x, 1.04x over the first three thousands and 0.88x, 0.83x over the fourth and
 * sixth: no later cost showed. The same code, compiled less far. Not `ebb
 * up`: its agents start jobs with its environment, and a job's own Bun program keeps its
 * runtime's defaults. Nothing the controller starts gets the variable (a step root's environment
 * is made afresh: step-roots.ts).
 */
import { readFileSync } from "node:fs";

export const PURGE_DELAY_VAR = "MIMALLOC_PURGE_DELAY";
/** -1: never give freed memory back; mimalloc reuses it for the next allocations. */
export const DAEMON_PURGE_DELAY = "-1";
const ROLES = new Set(["controller", "up"]);
/** JavaScriptCore's FTL tier, "0": off (the controller's setting). */
export const FTL_VAR = "BUN_JSC_useFTLJIT";

/** The variables a process running `command` (a subcommand) should start again with, if it should. */
export function reexecVars(command: string | undefined, env: Record<string, string | undefined>): Record<string, string> | undefined {
  if (command === undefined || !ROLES.has(command)) return undefined;
  if (env.EBB_REEXEC === "0" || env[PURGE_DELAY_VAR] !== undefined) return undefined;
  return { [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY, ...(command === "controller" && env[FTL_VAR] === undefined ? { [FTL_VAR]: "0" } : {}) };
}

/** NUL-separated strings as the kernel keeps argv and the environment, each NUL-terminated. */
function nulList(file: string): string[] {
  return readFileSync(file, "utf8").split("\0").slice(0, -1);
}

/** The environment this process started with (process.env may hold a .env file's variables too). */
function startEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of nulList("/proc/self/environ")) {
    const eq = kv.indexOf("=");
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return env;
}

/**
 * The controller or `ebb up` (`command`: the subcommand) starts again as it was started, argv as
 * the kernel keeps it (before Bun took its own flags out) and its environment, with `reexecVars`
 * added; returns if it need not, or if that fails, after saying so.
 */
export function reexecDaemon(command: string | undefined): void {
  if (command === undefined || !ROLES.has(command)) return;
  try {
    const env = startEnvironment();
    const vars = reexecVars(command, env);
    if (vars) process.execve!("/proc/self/exe", nulList("/proc/self/cmdline"), { ...env, ...vars });
  } catch (e) {
    process.stderr.write(`ebb: could not start again with ${PURGE_DELAY_VAR}=${DAEMON_PURGE_DELAY} (${(e as Error).message}); running with the allocator's defaults\n`);
  }
}

/** `env` without mimalloc's settings: for the agents `ebb up --slurm` starts, which choose their own. */
export function withoutAllocatorSettings(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("MIMALLOC_")));
}
