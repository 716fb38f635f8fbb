/**
 * `squeue` in an ebb job (beside srun on every job process's PATH): ebb queue with squeue's flags
 * and its default columns, so that a script's `squeue -u $USER -h` lists this cluster's jobs, not
 * those of a Slurm the host may also run. `squeueToQueue` (pure) maps the flags.
 */
import { UsageError } from "./errors.ts";
import { longStates, slurmShim, splitFlag } from "./slurm-shim.ts";

/** squeue's own default columns. */
const DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
/** squeue -l's columns (without the date line squeue prints above them). */
const LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
/** squeue's flags that take a value, as ebb queue's. */
const VALUED: Record<string, string> = { "-u": "--user", "--user": "--user", "-j": "--jobs", "--jobs": "--jobs", "-p": "--partition", "--partition": "--partition", "-t": "--state", "--states": "--state", "-o": "--format", "--format": "--format", "-O": "--format", "--Format": "--format", "-n": "--name", "--name": "--name" };

/** How long Slurm's squeue -j still lists an ended job: MinJobAge's default (slurm.conf), after which the controller forgets it. */
const MIN_JOB_AGE_S = 300;

/** squeue's command line as ebb queue's. -j without -t lists an ended job only as long as Slurm's would (a `while squeue -h -j $id` loop ends). */
export function squeueToQueue(argv: readonly string[]): string[] {
  const out: string[] = [];
  let long = false;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === "-h" || w === "--noheader") out.push("--noheader");
    else if (w === "--me") out.push("--me");
    else if (w === "-r" || w === "--array") out.push("--array-tasks");
    else if (w === "-l" || w === "--long") long = true;
    else {
      const { flag, inline } = splitFlag(w);
      const to = VALUED[flag];
      if (to === undefined) throw new UsageError(`${w}: ebb's squeue takes -u, --me, -j, -n, -p, -t, -o, -O, -h, -r and -l (ebb queue --help has the rest)`);
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      out.push(`${to}=${to === "--state" ? longStates(value) : value}`);
    }
  }
  if (out.some((w) => w.startsWith("--jobs=")) && !out.some((w) => w.startsWith("--state="))) out.push(`--ended-within=${MIN_JOB_AGE_S}`);
  return out.some((w) => w.startsWith("--format=")) ? out : [...out, `--format=${long ? LONG_FORMAT : DEFAULT_FORMAT}`];
}

export default slurmShim({
  name: "squeue",
  description: "squeue inside an ebb job (on every job process's PATH): ebb queue with squeue's flags and default columns.",
  target: "queue",
  map: squeueToQueue,
});
