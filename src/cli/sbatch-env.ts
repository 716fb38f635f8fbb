/**
 * sbatch's input environment variables (man sbatch, INPUT ENVIRONMENT VARIABLES, Slurm 22.05):
 * SBATCH_TIMELIMIT is --time, SBATCH_PARTITION --partition... `sbatchEnvWords` (pure) turns those
 * set into the flags they stand for, which `ebb sbatch` reads as its command line's (the fates of the
 * flags ebb lacks too); they win over #SBATCH lines and lose to the command line, as sbatch's do.
 * sbatch reads no SLURM_* variable as its input but SLURM_CLUSTERS and SLURM_HINT: a job's own
 * SLURM_NTASKS does not make a job it submits one of that many tasks (Slurm 22.05 side by side).
 * salloc reads its own SALLOC_* (`sallocEnvWords`): the same names but those of a batch script's
 * files, arrays, name and export, which salloc has no flag for either (man salloc 22.05).
 */

/** Variables that stand for a flag with a value, without their SBATCH_ prefix. */
const VALUED: Record<string, string> = {
  ACCOUNT: "account", ACCTG_FREQ: "acctg-freq", ARRAY_INX: "array", BATCH: "batch", CLUSTERS: "clusters", CONSTRAINT: "constraint",
  CONTAINER: "container", CORE_SPEC: "core-spec", CPUS_PER_GPU: "cpus-per-gpu", DELAY_BOOT: "delay-boot", DISTRIBUTION: "distribution",
  ERROR: "error", EXPORT: "export", GPU_BIND: "gpu-bind", GPU_FREQ: "gpu-freq", GPUS: "gpus", GPUS_PER_NODE: "gpus-per-node",
  GPUS_PER_TASK: "gpus-per-task", GRES: "gres", GRES_FLAGS: "gres-flags", HINT: "hint", INPUT: "input", JOB_NAME: "job-name",
  MEM_BIND: "mem-bind", MEM_PER_CPU: "mem-per-cpu", MEM_PER_GPU: "mem-per-gpu", MEM_PER_NODE: "mem", NETWORK: "network",
  OPEN_MODE: "open-mode", OUTPUT: "output", PARTITION: "partition", POWER: "power", PROFILE: "profile", QOS: "qos",
  REQ_SWITCH: "switches", RESERVATION: "reservation", SIGNAL: "signal", THREAD_SPEC: "thread-spec", THREADS_PER_CORE: "threads-per-core",
  TIMELIMIT: "time", WAIT_ALL_NODES: "wait-all-nodes", WCKEY: "wckey",
};
/** Variables that stand for a flag without a value, whatever they are set to. */
const SWITCHES: Record<string, string> = {
  GET_USER_ENV: "get-user-env", IGNORE_PBS: "ignore-pbs", NO_KILL: "no-kill", NO_REQUEUE: "no-requeue", OVERCOMMIT: "overcommit",
  REQUEUE: "requeue", SPREAD_JOB: "spread-job", USE_MIN_NODES: "use-min-nodes", WAIT: "wait",
};
/** SLURM_ names sbatch reads when the SBATCH_ one is not set. */
const SLURM_ALIASES: Record<string, string> = { CLUSTERS: "SLURM_CLUSTERS", HINT: "SLURM_HINT" };

/** sbatch's names salloc does not read: its batch script's files, arrays, name, export and its own --wait's. */
const NOT_SALLOC = new Set(["ARRAY_INX", "BATCH", "DISTRIBUTION", "ERROR", "EXPORT", "INPUT", "JOB_NAME", "OPEN_MODE", "OUTPUT", "GET_USER_ENV", "IGNORE_PBS", "NO_REQUEUE", "REQUEUE", "WAIT"]);

/** Each set SBATCH_ variable and the flag it stands for (`--time=7`), in a fixed order. */
export function sbatchEnvWords(env: Record<string, string | undefined>): { name: string; word: string }[] {
  return envWords(env, "SBATCH_", () => true);
}

/** Each set SALLOC_ variable (salloc's input variables) and the flag it stands for. */
export function sallocEnvWords(env: Record<string, string | undefined>): { name: string; word: string }[] {
  return envWords(env, "SALLOC_", (suffix) => !NOT_SALLOC.has(suffix));
}

function envWords(env: Record<string, string | undefined>, prefix: string, reads: (suffix: string) => boolean): { name: string; word: string }[] {
  const words: { name: string; word: string }[] = [];
  for (const [suffix, flag] of Object.entries(VALUED)) {
    if (!reads(suffix)) continue;
    const name = env[`${prefix}${suffix}`] !== undefined ? `${prefix}${suffix}` : SLURM_ALIASES[suffix];
    const value = name === undefined ? undefined : env[name];
    if (name !== undefined && value !== undefined && value !== "") words.push({ name, word: `--${flag}=${value}` });
  }
  for (const [suffix, flag] of Object.entries(SWITCHES)) if (reads(suffix) && env[`${prefix}${suffix}`] !== undefined) words.push({ name: `${prefix}${suffix}`, word: `--${flag}` });
  // --exclusive takes an optional value (user, mcs); any other value is plain --exclusive.
  const exclusive = env[`${prefix}EXCLUSIVE`];
  if (exclusive !== undefined) words.push({ name: `${prefix}EXCLUSIVE`, word: /^(user|mcs|oversubscribe)$/.test(exclusive) ? `--exclusive=${exclusive}` : "--exclusive" });
  return words;
}
