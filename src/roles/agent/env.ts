/** Environments of the processes an agent starts. */
import { basename, delimiter, join } from "node:path";
import { BASH_ENV_FILE } from "./ebb-command.ts";
import { commaList, slurmRankVars, type SlurmOwner, type SlurmRank } from "../slurm-env.ts";
import { userInfo } from "node:os";
import { currentUser } from "../../util/user.ts";
import type { Identity } from "../identity.ts";
import type { StepSpec } from "../../proto/step.ts";

/** Whom a job's processes run as here (Slurm's SLURM_JOB_USER/UID/GID): the job's user, or the agent's. */
export function ownerOf(id: Identity | undefined): SlurmOwner {
  if (id) return { user: id.user, uid: id.uid, gid: id.gid };
  // The agent's own: looked up once (each look-up read /etc/passwd, once or twice a job).
  if (!self) {
    const me = userInfo();
    self = { user: currentUser(), uid: me.uid, gid: me.gid };
  }
  return self;
}
let self: SlurmOwner | undefined;

/**
 * The agent's own environment without ebb's variables, as the base for every job process; without
 * Slurm's too (an agent that `ebb up --slurm` started runs in a Slurm step, and ebb's jobs are not
 * it), nor the allocator's settings (util/reexec.ts): the daemon's, not its jobs'.
 */
export function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(EBB_|PMI_|SLURM_|SLURMD_|MIMALLOC_)/.test(k)) out[k] = v;
  return out;
}

/** The PATH a job's processes search: its own, else the usual system one. */
export const jobPath = (env: Record<string, string>): string => env.PATH ?? "/usr/local/bin:/usr/bin:/bin";

/**
 * Put the directory holding the `ebb` command first on PATH, so jobs can call `ebb run`, and the
 * one holding the fallback `bun` last, so that only a node without bun runs it. `env` is the
 * caller's own new object: it is changed and returned, not copied once more (a job's whole
 * environment, per process started).
 */
export function withEbbOnPath(env: Record<string, string>, dirs: { dir: string; fallback: string }): Record<string, string> {
  const parts = jobPath(env).split(delimiter).filter((p) => p !== dirs.dir && p !== dirs.fallback);
  // BASH_ENV puts them back after a login shell's /etc/profile (ebb-command.ts); the job's own BASH_ENV is read after it.
  const bashEnv = join(dirs.dir, BASH_ENV_FILE);
  // A job submitted from a job has an agent's BASH_ENV already: that one is ebb's, not the job's own.
  if (env.BASH_ENV !== undefined && basename(env.BASH_ENV) !== BASH_ENV_FILE) env.EBB_BASH_ENV = env.BASH_ENV;
  env.BASH_ENV = bashEnv;
  env.PATH = [dirs.dir, ...parts, dirs.fallback].join(delimiter);
  return env;
}

/** Where a rank runs in its step: the same facts Slurm's variables are made of (`nodes` and `tasks` unchanged once given: their texts are made once). */
export type RankPlace = SlurmRank;

/** The names of a step's nodes, one frozen array per spec: the ranks' node list texts are then made once (slurm-env.ts). */
const namesOf = new WeakMap<StepSpec, readonly string[]>();
export function stepNodeNames(spec: StepSpec): readonly string[] {
  let names = namesOf.get(spec);
  if (!names) namesOf.set(spec, (names = Object.freeze(spec.nodes.map((n) => n.name))));
  return names;
}

/** A rank's variables, ebb's and Slurm's; `nodeHost` is the address this node's agent is reached at. */
export function rankVars(p: RankPlace, controllerUrl: string, nodeHost: string, caFile?: string): Record<string, string> {
  return {
    ...slurmRankVars(p),
    ...(caFile === undefined ? {} : { EBB_CA: caFile }),
    EBB_STEP_ID: String(p.stepId),
    EBB_NODELIST: commaList(p.nodes),
    EBB_NNODES: String(p.nodes.length),
    EBB_NTASKS: String(p.size),
    EBB_PROCID: String(p.rank),
    EBB_LOCALID: String(p.localId),
    EBB_NODEID: String(p.nodeIndex),
    EBB_NODENAME: p.nodes[p.nodeIndex]!,
    EBB_NODE_HOST: nodeHost,
    EBB_CONTROLLER: controllerUrl,
  };
}
