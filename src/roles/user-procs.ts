/**
 * How many processes (threads count too) one user may have on a node once a root agent has
 * dropped a job's process to that user: half of what the kernel can number (kernel.pid_max,
 * kernel.threads-max), as RLIMIT_NPROC, soft and hard. The kernel counts every process of the
 * uid against it, so a job that forks without end fails its own forks while root's processes (the
 * agent's heartbeats and spawns) and the other users' go on; without it a user inherits root's
 * limit, threads-max / 2, more than the pids there are. Root itself is never limited by it.
 */
import { readFileSync } from "node:fs";

function kernelNumber(name: string): number {
  try {
    const n = Number(readFileSync(`/proc/sys/kernel/${name}`, "utf8").trim());
    return Number.isSafeInteger(n) && n > 0 ? n : Infinity;
  } catch {
    return Infinity;
  }
}

/** The most processes one user's jobs may hold on this node (read once). */
export const USER_PROCS = Math.max(1024, Math.floor(Math.min(kernelNumber("pid_max"), kernelNumber("threads-max"), 1 << 22) / 2));

/** For the post-drop shell: RLIMIT_NPROC (bash's -u, dash's -p); one it may not raise (a lower hard limit) stays as it is. */
export const LIMIT_USER_PROCS_SH = `{ ulimit -u ${USER_PROCS} || ulimit -p ${USER_PROCS}; } 2>/dev/null`;

/** RLIMIT_NPROC's number on Linux (x86-64 and arm64 alike). */
export const RLIMIT_NPROC = 6;
