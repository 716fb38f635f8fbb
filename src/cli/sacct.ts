/**
 * `sacct` in an ebb job (beside srun on every job process's PATH): ebb history with sacct's flags,
 * so that a script's closing `sacct -j $SLURM_JOB_ID --format=JobID,Elapsed,MaxRSS` reports this
 * cluster's job, not fails (no Slurm) or asks a Slurm the host may also run about another job.
 * `sacctToHistory` (pure) maps the flags. A job's line is followed by its batch shell's
 * (`123.batch`) and its steps' (`123.0`...) unless `-X`, as sacct prints them; a step's id (`123.batch`, `123.0`)
 * lists that step's line alone (`step-rows.ts` stepSelection).
 */
import { UsageError } from "./errors.ts";
import { longStates, slurmShim, splitFlag } from "./slurm-shim.ts";
import { SACCT_DEFAULT } from "./history.ts";

/** sacct's flags that take a value, as ebb history's. */
const VALUED: Record<string, string> = {
  "-j": "--jobs", "--jobs": "--jobs",
  "-o": "--format", "--format": "--format", "--fields": "--format",
  "-u": "--user", "--user": "--user", "--uid": "--user",
  "-S": "--since", "--starttime": "--since",
  "-E": "--until", "--endtime": "--until",
  "-s": "--state", "--state": "--state",
  "-r": "--partition", "--partition": "--partition",
  "--name": "--name",
  "--delimiter": "--delimiter",
};
/** sacct's flags that change nothing here (one line a job already; units and widths are ebb's). */
const SAME = new Set(["-a", "--allusers", "-L", "--allclusters", "-D", "--duplicates", "-T", "--truncate", "-x", "--array"]);
const VALUED_SAME = new Set(["--units", "-M", "--clusters"]);

/** sacct's command line as ebb history's (whose default window, since midnight, is sacct's). */
export function sacctToHistory(argv: readonly string[]): string[] {
  const out: string[] = [];
  let format: string | undefined;
  let steps = true;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === "-n" || w === "--noheader") out.push("--noheader");
    else if (w === "-P" || w === "--parsable2") out.push("--parsable2");
    else if (w === "-p" || w === "--parsable") out.push("--parsable");
    else if (w === "-b" || w === "--brief") format = "JobID,State,ExitCode";
    else if (w === "-l" || w === "--long") format = "JobID,JobName,Partition,AllocCPUS,State,ExitCode,Submit,Start,End,Elapsed,TotalCPU,MaxRSS,NNodes,NodeList";
    else if (w === "-X" || w === "--allocations") steps = false;
    else if (SAME.has(w)) continue;
    else {
      const { flag, inline } = splitFlag(w);
      const to = VALUED[flag];
      if (to === undefined && !VALUED_SAME.has(flag))
        throw new UsageError(`${w}: ebb's sacct takes -j, -o/--format, -n, -P, -p, -X, -b, -l, -u, -S, -E, -s, -r and --name (ebb history --help has the rest)`);
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      if (to === undefined) continue;
      if (to === "--format") format = value;
      // sacct's states may be short (CD, F, PD); a step's id (123.batch, 123.0) history reads itself.
      else if (to === "--state") out.push(`--state=${longStates(value)}`);
      else out.push(`${to}=${value}`);
    }
  }
  return [...out, ...(steps ? ["--steps"] : []), `--format=${format ?? SACCT_DEFAULT}`];
}

export default slurmShim({
  name: "sacct",
  description: "sacct inside an ebb job (on every job process's PATH): ebb history with sacct's flags, a line a job and one for each of its steps (none with -X).",
  target: "history",
  map: sacctToHistory,
});
