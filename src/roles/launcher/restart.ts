/**
 * Checkpoint-restart worlds (libebb programs, src/c/ebb; docs/adaptation.md §12): what the launcher
 * needs besides the rounds the adapter runs — whether a world is one, where its checkpoints live,
 * the newest periodic checkpoint, the restarted step's spec, and the words for a restart that failed.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { CR } from "../../proto/adapt.ts";
import type { StepSpec } from "../../proto/step.ts";
import type { StepRoot } from "./step-root.ts";
import type { RestartGrant } from "./controller-link.ts";

/** Whether the step's ranks are libebb ranks: rank 0 put the flag at ebb_init. */
export function isCheckpointRestart(root: StepRoot): boolean {
  return root.kvs.get(CR.flag) !== undefined;
}

/** The job's checkpoint directory: its $EBB_CKPT_DIR (relative: to the working directory), else <cwd>/.ebb-ckpt/job-<id>. */
export function checkpointDir(env: Record<string, string>, cwd: string, jobId: number): string {
  const d = env.EBB_CKPT_DIR;
  if (d) return isAbsolute(d) ? d : join(cwd, d);
  return join(cwd, ".ebb-ckpt", `job-${jobId}`);
}

/** The controller's DOWN judgement (3 heartbeats of 2 s and an eighth) when its grant does not say it. */
const DOWN_AFTER_MS = 6250;
/** On top of it, the fault realloc's way to the launcher. */
const REALLOC_MARGIN_MS = 1000;

/**
 * How long a failing rank of a checkpoint-restart world is held for the node loss that would explain
 * it (docs/adaptation.md §12.4): as long as the controller takes to judge a silent node DOWN, and its realloc.
 */
export function rankFailureGrace(downAfterMs: number | undefined): number {
  return (downAfterMs ?? DOWN_AFTER_MS) + REALLOC_MARGIN_MS;
}

/** The newest complete periodic checkpoint in `dir`, or why there is none. */
export function latestCheckpoint(dir: string): { path: string } | { reason: string } {
  try {
    const tag = readFileSync(join(dir, CR.latest), "utf8").trim();
    if (!/^p[0-9]+-[0-9]+$/.test(tag)) return { reason: `${join(dir, CR.latest)} names no checkpoint (${JSON.stringify(tag.slice(0, 40))})` };
    return { path: join(dir, tag) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      reason:
        code === "ENOENT"
          ? `the job took no periodic checkpoint (ebb_checkpoint_every, or EBB_CHECKPOINT_EVERY=N in its environment) in ${dir}`
          : `cannot read ${join(dir, CR.latest)}: ${(e as Error).message}`,
    };
  }
}

/**
 * Removes the periodic checkpoints in `dir` other than the newest complete one: those a world that
 * ended for a node's loss was writing (no manifest, never `latest`); nothing would ever read or
 * remove them. Only while no rank of the job runs.
 */
export function removeIncompletePeriodic(dir: string): void {
  const latest = latestCheckpoint(dir);
  const keep = "path" in latest ? latest.path : undefined;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (/^p[0-9]+-[0-9]+$/.test(name) && join(dir, name) !== keep) rmSync(join(dir, name), { recursive: true, force: true });
}

/**
 * The step the world restarts in: the old step's program and settings on the grant's nodes, a new
 * world of its own (rank 0 up), its ranks joining the read window `windowId`, the checkpoint
 * pre-put in their KVS.
 */
export function restartSpec(old: StepSpec, g: RestartGrant, o: { dir: string; from: string; generation: number; windowId: number }): StepSpec {
  const size = g.tasks.reduce((a, b) => a + b, 0);
  return {
    ...old,
    stepId: g.stepId,
    nodes: g.nodes,
    tasks: g.tasks,
    preput: { [CR.dir]: o.dir, [CR.resume]: o.from },
    elastic: { ...old.elastic!, status: "joining", generation: o.generation, rankBase: 0, worldSize: size, worldNodes: undefined, window: { adaptId: o.windowId } },
  };
}

/** Why the job cannot go on after its restart failed, and where the checkpoint it had is. */
export function restartFailure(why: string, size: number, from: string, shmNodes: readonly string[]): string {
  const shm = shmNodes.length > 0 ? ` (parts in /dev/shm/ebb-ckpt-* of ${shmNodes.join(",")})` : "";
  return `the restart at ${size} ranks failed: ${why}; the checkpoint is kept in ${from}${shm}: resume it with EBB_RESUME=${from}`;
}
