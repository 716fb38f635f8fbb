/**
 * `scontrol update JobId=ID KEY=VALUE...` (pure): the job and what PATCH /v1/jobs/:id changes of it,
 * from the keys scripts use (any case, as scontrol takes them): TimeLimit= (a duration, UNLIMITED,
 * or +N/-N minutes from the job's limit), JobName= (Name=), Dependency= (empty: none), and a
 * pending job's NumNodes=MIN[-MAX] (ReqNodes=) and Partition=. Every other key is refused naming
 * it, with the reason when scripts commonly set it.
 */
import { UsageError } from "./errors.ts";

export interface JobUpdateWords {
  id: string;
  name?: string;
  /** As given: the API reads durations as Slurm writes them; `+N`/`-N` minutes are the caller's to add. */
  timeLimit?: string;
  dependency?: string;
  minNodes?: number;
  maxNodes?: number;
  partition?: string;
}

/** Keys scripts set that ebb cannot change, and why. */
const REFUSED: Record<string, string> = {
  numcpus: "ebb does not change a job's CPUs once submitted",
  numtasks: "ebb does not change a job's task count once submitted",
  qos: "ebb has no QOS",
  account: "ebb keeps no accounts",
  priority: "ebb orders the queue by its own priorities (ebb priority)",
  nice: "ebb orders the queue by its own priorities (ebb priority)",
  starttime: "ebb sets a job's begin time at submission (sbatch --begin)",
  comment: "ebb keeps no comments",
};

export function scontrolUpdate(words: readonly string[]): JobUpdateWords {
  let id: string | undefined;
  const u: Omit<JobUpdateWords, "id"> = {};
  for (const w of words) {
    const eq = w.indexOf("=");
    if (eq <= 0) throw new UsageError(`update: "${w}" is not KEY=VALUE (scontrol update JobId=ID TimeLimit=... JobName=... Dependency=...)`);
    const key = w.slice(0, eq).toLowerCase();
    const value = w.slice(eq + 1);
    if (key === "jobid" || key === "job") id = value;
    else if (key === "jobname" || key === "name") u.name = value;
    else if (key === "timelimit") u.timeLimit = value;
    else if (key === "dependency") u.dependency = value;
    else if (key === "numnodes" || key === "reqnodes") Object.assign(u, nodeCount(value));
    else if (key === "partition") u.partition = value;
    else throw new UsageError(`Update of this parameter is not supported: ${w}${REFUSED[key] ? ` (${REFUSED[key]})` : " (ebb's scontrol updates a job's TimeLimit, JobName, Dependency, NumNodes and Partition)"}`);
  }
  if (id === undefined) throw new UsageError("update: give JobId=ID (scontrol update JobId=$SLURM_JOB_ID TimeLimit=...)");
  if (Object.values(u).every((v) => v === undefined)) throw new UsageError("update: nothing to change; give TimeLimit=, JobName=, Dependency=, NumNodes= or Partition=");
  return { id, ...u };
}

/** NumNodes=MIN[-MAX], as scontrol reads it. */
function nodeCount(value: string): { minNodes: number; maxNodes?: number } {
  const m = /^(\d+)(?:-(\d+))?$/.exec(value);
  if (!m || Number(m[1]) < 1 || (m[2] !== undefined && Number(m[2]) < Number(m[1]))) throw new UsageError(`NumNodes=${value}: expected a node count or MIN-MAX (Node count specification invalid)`);
  return m[2] === undefined ? { minNodes: Number(m[1]) } : { minNodes: Number(m[1]), maxNodes: Number(m[2]) };
}

/** TimeLimit=+N / -N: N minutes more or less than `current` seconds; else the value as given. */
export function relativeLimit(value: string, current: number): string | number {
  const m = /^([+-])(\d+)$/.exec(value);
  if (!m) return value;
  const next = current + (m[1] === "+" ? 1 : -1) * Number(m[2]) * 60;
  if (next <= 0) throw new UsageError(`TimeLimit=${value}: the job's limit is ${Math.round(current / 60)} minutes`);
  return next;
}
