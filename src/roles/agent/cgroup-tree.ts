/**
 * An agent's cgroup directories as trees (`ebb-agent-NAME-PID/job-N`): the processes in them, a
 * kill of them all, and a removal bottom-up (a cgroup goes only once its children have). Only
 * directories are walked, never through a link, and no deeper than the agent makes them.
 */
import { readdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { writeCgroupFile } from "./cgroup-limits.ts";

/** Our cgroups are `ebb-agent-NAME-PID/job-N`: anything deeper is not ours to walk. */
const MAX_DEPTH = 3;

/** `dir` and the cgroups below it, deepest first; directories only (a link is not followed). */
export function treeOf(dir: string, depth = 0): string[] {
  if (depth >= MAX_DEPTH) return [dir];
  let subs: string[] = [];
  try {
    subs = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
  } catch {
    /* gone */
  }
  return [...subs.flatMap((s) => treeOf(s, depth + 1)), dir];
}

export const pidsIn = (dir: string): number[] => {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

/** Kills every process in the cgroup `dir` and below (cgroup.kill on v2; each pid on v1); their pids. */
export function killTree(dir: string): number[] {
  const tree = treeOf(dir);
  const pids = tree.flatMap(pidsIn);
  if (pids.length === 0) return [];
  try {
    writeCgroupFile(join(dir, "cgroup.kill"), "1");
  } catch {
    for (const d of tree)
      for (const pid of pidsIn(d))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
  }
  return pids;
}

/** Removes `dir` bottom-up; true if it is gone. */
export function removeTree(dir: string): boolean {
  for (const d of treeOf(dir))
    try {
      rmdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") return false;
    }
  return true;
}

/** Whether a process is still in `dir` or below. */
export const populated = (dir: string): boolean => treeOf(dir).some((d) => pidsIn(d).length > 0);

/**
 * Kills what is in `dirs` and removes them, waiting up to `waitMs` for the killed to leave; the
 * directories left (still busy).
 */
export async function removeCgroups(dirs: readonly string[], waitMs: number): Promise<string[]> {
  for (const d of dirs) killTree(d);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = dirs.filter((d) => !removeTree(d));
    if (left.length === 0 || Date.now() >= deadline) return left;
    await Bun.sleep(20);
  }
}
