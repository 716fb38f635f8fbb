/**
 * The daemons' allocator setting. Bun's allocator (mimalloc) gives freed memory back to the OS
 * 100 ms after it is freed (its `purge_delay`), and a daemon that frees and allocates the same
 * few MiB again every job paid for it: page faults and madvise calls, 0.6-0.8x the controller's
 * CPU per null job without it (bench/_ab-null-jobs.ts, issue 36). Daemons keep what they free
 * instead, for a bounded RSS cost (README, "Daemons' memory").
 *
 * mimalloc reads MIMALLOC_PURGE_DELAY once, when the process starts; so a daemon executes itself
 * again with it added, before any other module of ebb runs: execve keeps the pid, argv, stdio,
 * working directory, signal dispositions and every descriptor not marked close-on-exec. Not when
 * the variable is set already (a user's value, or this is the second start), nor with
 * EBB_REEXEC=0.
 */
import { readFileSync } from "node:fs";

export const PURGE_DELAY_VAR = "MIMALLOC_PURGE_DELAY";
/** -1: never give freed memory back; mimalloc reuses it for the next allocations. */
export const DAEMON_PURGE_DELAY = "-1";
const DAEMONS = new Set(["controller", "agent", "up"]);

/** The variables a process running `command` should start again with, if it should. */
export function reexecVars(command: string | undefined, env: Record<string, string | undefined>): Record<string, string> | undefined {
  if (command === undefined || !DAEMONS.has(command)) return undefined;
  if (env.EBB_REEXEC === "0" || env[PURGE_DELAY_VAR] !== undefined) return undefined;
  return { [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY };
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
 * A daemon (`command`: the subcommand) starts again as it was started, argv as the kernel keeps
 * it (before Bun took its own flags out) and its environment, with `reexecVars` added; returns if
 * it need not, or if that fails, after saying so.
 */
export function reexecDaemon(command: string | undefined): void {
  if (command === undefined || !DAEMONS.has(command)) return;
  try {
    const env = startEnvironment();
    const vars = reexecVars(command, env);
    if (vars) process.execve!("/proc/self/exe", nulList("/proc/self/cmdline"), { ...env, ...vars });
  } catch (e) {
    process.stderr.write(`ebb: could not start again with ${PURGE_DELAY_VAR}=${DAEMON_PURGE_DELAY} (${(e as Error).message}); running with the allocator's defaults\n`);
  }
}
