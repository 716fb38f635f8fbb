/**
 * `seff JOBID` in an ebb job (beside srun on every job process's PATH): a job's CPU and memory
 * efficiency in seff's layout, from ebb's record of the job. Scripts end with `seff $SLURM_JOB_ID`;
 * without it here the last line fails (no such command, or a host Slurm that knows no such job) and
 * so does the job. As seff's, a running job's CPU and memory read 0 (ebb, like sacct, has them once
 * the job ended), with seff's warning.
 */
import type { JobView } from "../api/schemas.ts";
import { defineCommand } from "./command.ts";
import { client, jobRefArg } from "./common.ts";
import { UsageError } from "./errors.ts";
import { err, out } from "../util/stdio.ts";

const pad = (n: number) => String(n).padStart(2, "0");
/** seff's times: HH:MM:SS, with D- before them past a day. */
function clock(seconds: number): string {
  const t = Math.max(0, Math.round(seconds));
  const d = Math.floor(t / 86400);
  const hms = `${pad(Math.floor((t % 86400) / 3600))}:${pad(Math.floor((t % 3600) / 60))}:${pad(t % 60)}`;
  return d > 0 ? `${d}-${hms}` : hms;
}
/** seff's memory: MB below a GB, else GB, two decimals. */
const memory = (mib: number) => (mib < 1024 ? `${mib.toFixed(2)} MB` : `${(mib / 1024).toFixed(2)} GB`);
const percent = (part: number, whole: number) => `${whole > 0 ? ((100 * part) / whole).toFixed(2) : "0.00"}%`;

/** The report, as seff prints it; `now` (ms) ends a running job's wall-clock time. */
export function seffReport(j: JobView, cluster: string, now: number): string {
  const lines = [`Job ID: ${j.id}`];
  if (j.arrayJobId !== null && j.arrayTaskId !== null) lines.push(`Array Job ID: ${j.arrayJobId}_${j.arrayTaskId}`);
  lines.push(`Cluster: ${cluster}`, `User/Group: ${j.user ?? "?"}/${j.user ?? "?"}`);
  const ended = j.endTime !== null;
  lines.push(`State: ${j.state}${ended && j.exitCode !== null ? ` (exit code ${j.exitCode})` : ""}`);
  const cores = j.shares.reduce((k, s) => k + s.cpus, 0);
  const nodes = j.shares.length;
  if (nodes > 1) lines.push(`Nodes: ${nodes}`, `Cores per node: ${Math.round(cores / nodes)}`);
  else lines.push(`Cores: ${cores}`);
  const wall = j.startTime === null ? 0 : ((ended ? Date.parse(j.endTime!) : now) - Date.parse(j.startTime)) / 1000;
  const cpu = j.usage?.cpuSec ?? 0;
  lines.push(`CPU Utilized: ${clock(cpu)}`, `CPU Efficiency: ${percent(cpu, wall * cores)} of ${clock(wall * cores)} core-walltime`, `Job Wall-clock time: ${clock(wall)}`);
  const held = j.shares.reduce((m, s) => m + s.memMiB, 0);
  const peak = j.usage?.peakMemMiB ?? 0;
  lines.push(`Memory Utilized: ${memory(peak)}${nodes > 1 ? " (estimated maximum)" : ""}`, `Memory Efficiency: ${percent(peak, held)} of ${memory(held)}${nodes > 1 ? ` (${memory(held / nodes)}/node)` : ""}`);
  if (j.state === "RUNNING" || j.state === "PENDING") lines.push(`WARNING: Efficiency statistics may be misleading for ${j.state} jobs.`);
  return lines.join("\n") + "\n";
}

export default defineCommand({
  meta: { name: "seff", description: "seff JOBID inside an ebb job (on every job process's PATH): the job's CPU and memory efficiency, in seff's layout.", hidden: true },
  args: { words: { type: "positional", variadic: true, description: "the job id" } },
  stopAtPositional: true,
  ownParser: true,
  ownShortHelp: true,
  run: async ({ raw }) => {
    const ids = raw.filter((w) => w !== "-d");
    if (ids.length !== 1 || ids[0]!.startsWith("-")) {
      err("Usage: seff [Options] <Jobid>\n       Options:\n       -h    Help menu\n");
      process.exit(1);
    }
    try {
      const job = await client({}).job(jobRefArg(ids[0]!));
      out(seffReport(job, process.env.SLURM_CLUSTER_NAME || "ebb", Date.now()));
    } catch (e) {
      err(`seff: ${e instanceof UsageError ? e.message : (e as Error).message}\n`);
      process.exit(1);
    }
  },
});
