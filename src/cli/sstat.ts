/**
 * `sstat` in an ebb job (beside srun on every job process's PATH): refused, saying where ebb has
 * what it would print, rather than a Slurm the host may also run answering about another job.
 */
import { defineCommand } from "./command.ts";
import { err } from "../util/stdio.ts";

export const SSTAT_REFUSAL =
  "ebb keeps no live statistics of a running job's steps; a job's CPU time and peak memory are in ebb show JOBID, and sacct -j JOBID -o JobID,TotalCPU,MaxRSS, once it has ended";

export default defineCommand({
  meta: { name: "sstat", description: "sstat inside an ebb job (on every job process's PATH): refused, naming where ebb has a job's CPU time and peak memory.", hidden: true },
  args: { words: { type: "positional", variadic: true, description: "sstat's flags" } },
  stopAtPositional: true,
  ownParser: true,
  ownShortHelp: true,
  run: () => {
    err(`sstat: error: ${SSTAT_REFUSAL}\n`);
    process.exit(1);
  },
});
