/**
 * The flags of Slurm's sbatch and srun (22.05) that ebb's own commands do not have, each with what
 * ebb does when a script or a command line gives it: nothing, because ebb does that anyway
 * (`same`, quietly); nothing, because it changes nothing of what the job does or prints here
 * (`ignore`, said as a warning); or a refusal, because ebb cannot do what it asks and the job would
 * not be what it says (`refuse`, exit 2). `value`: the flag takes one. `when`: the values that are
 * ebb's own behaviour and so pass quietly (--send-libs=no).
 */

export interface SlurmOnly {
  value: boolean;
  same?: string;
  ignore?: string;
  refuse?: string;
  /** A value that asks for what ebb does anyway: accepted without a word. */
  when?: (value: string) => boolean;
}

const NO_ACCOUNTS = "ebb keeps no accounts";
const SHARED = "ebb's jobs share nodes, never cores, memory or GPUs";
const GPUS = "ebb counts GPUs per job, node or task (--gpus, --gpus-per-node, --gpus-per-task)";
const NO_TOPOLOGY = "ebb places a job's cores without sockets or threads";
const STEP_RESOURCES = "a step runs with its job's resources";
const ignore = (why: string, value = true): SlurmOnly => ({ value, ignore: why });
const refuse = (why: string, value = true): SlurmOnly => ({ value, refuse: why });
const same = (why: string, value = false): SlurmOnly => ({ value, same: why });

/** Flags both commands share. */
const COMMON: Record<string, SlurmOnly> = {
  account: ignore(NO_ACCOUNTS),
  A: ignore(NO_ACCOUNTS),
  qos: ignore("ebb has no QOS"),
  q: ignore("ebb has no QOS"),
  reservation: ignore("ebb has no advance reservations"),
  oversubscribe: ignore(SHARED, false),
  s: ignore(SHARED, false),
  "gres-flags": ignore("ebb places a job's GPUs itself"),
  "gpus-per-socket": refuse(GPUS),
  "tres-per-task": refuse("ebb takes cores and GPUs per task as --cpus-per-task and --gpus-per-task"),
  "cluster-constraint": ignore("ebb is one cluster"),
  prefer: ignore("ebb places jobs without preferred features; --constraint names those a node must have"),
  tmp: ignore("ebb does not count a node's disk"),
  "sockets-per-node": ignore(NO_TOPOLOGY),
  "cores-per-socket": ignore(NO_TOPOLOGY),
  "threads-per-core": ignore(NO_TOPOLOGY),
  "ntasks-per-core": ignore(NO_TOPOLOGY),
  "ntasks-per-socket": ignore(NO_TOPOLOGY),
  "extra-node-info": ignore(NO_TOPOLOGY),
  B: ignore(NO_TOPOLOGY),
  "core-spec": ignore("ebb reserves no cores of a node for the system"),
  S: ignore("ebb reserves no cores of a node for the system"),
  "thread-spec": ignore("ebb reserves no cores of a node for the system"),
  hint: ignore("ebb binds each rank to cores of its own (ebb run --cpu-bind)"),
  "mem-bind": ignore("ebb does not bind a job's memory"),
  "gpu-bind": ignore("ebb does not bind GPUs to ranks"),
  "cpu-freq": ignore("ebb does not set CPU frequencies"),
  "gpu-freq": ignore("ebb does not set GPU frequencies"),
  power: ignore("ebb does not manage power"),
  network: ignore("ebb does not allocate network resources"),
  switches: ignore("ebb places jobs without a network topology"),
  "spread-job": ignore("ebb places a job's nodes itself", false),
  contiguous: ignore("ebb places a job's nodes itself", false),
  "use-min-nodes": ignore("ebb starts a job at the size it asked for", false),
  "acctg-freq": ignore("ebb samples accounting its own way"),
  profile: ignore("ebb samples accounting its own way"),
  comment: ignore("ebb keeps no comments"),
  wckey: ignore(NO_ACCOUNTS),
  "mcs-label": ignore("ebb has no MCS labels"),
  licenses: ignore("ebb counts no licenses"),
  L: ignore("ebb counts no licenses"),
  nice: ignore("ebb orders jobs by submit time"),
  priority: ignore("ebb orders jobs by submit time"),
  propagate: ignore("a job's processes get the resource limits of the node's agent"),
  "delay-boot": ignore("ebb does not reboot nodes"),
  reboot: ignore("ebb does not reboot nodes", false),
  quiet: ignore("it changes only what the command prints", false),
  Q: ignore("it changes only what the command prints", false),
  verbose: ignore("it changes only what the command prints", false),
  v: ignore("it changes only what the command prints", false),
  clusters: refuse("ebb is one cluster; submit to another cluster with its own controller (--controller)"),
  M: refuse("ebb is one cluster; submit to another cluster with its own controller (--controller)"),
  uid: refuse("a job runs as the user whose token submitted it"),
  gid: refuse("a job runs as the user whose token submitted it"),
  container: refuse("ebb does not run OCI containers"),
  "het-group": refuse("ebb has no heterogeneous jobs"),
};

/** sbatch's own flags that ebb submit does not have. */
export const SBATCH_ONLY: Record<string, SlurmOnly> = {
  ...COMMON,
  "time-min": ignore("the job gets all of its --time"),
  deadline: refuse("ebb has no deadlines; a job ends at its --time"),
  // --no-kill changes only what happens when a node fails: the job runs the same until then.
  "no-kill": ignore("a job whose node fails ends NODE_FAIL (or is requeued with --requeue)", false),
  k: ignore("a job whose node fails ends NODE_FAIL (or is requeued with --requeue)", false),
  input: refuse("a batch script reads nothing on its standard input in ebb; redirect in the script (cmd < FILE)"),
  i: refuse("a batch script reads nothing on its standard input in ebb; redirect in the script (cmd < FILE)"),
  "export-file": refuse("give the variables with --export"),
  "get-user-env": ignore("a job gets the environment of the command that submitted it", false),
  "ignore-pbs": ignore("ebb does not read #PBS lines", false),
  "wait-all-nodes": ignore("a job's nodes are up when ebb starts it"),
  bb: refuse("ebb has no burst buffers"),
  bbf: refuse("ebb has no burst buffers"),
  batch: ignore("ebb's nodes have no features; use --nodelist or --exclude"),
  // Read by ebb submit itself (sbatchParsable): it prints the job id alone, as sbatch does.
  parsable: same("ebb submit prints the job id alone", false),
  "test-only": refuse("give it on the command line (ebb submit --test-only)", false),
  wait: refuse("give it on the command line (ebb submit --wait)", false),
  W: refuse("give it on the command line (ebb submit --wait)", false),
  wrap: refuse("a script has its commands already", true),
  usage: refuse("not a flag for a script", false),
  version: refuse("not a flag for a script", false),
  V: refuse("not a flag for a script", false),
  nodefile: refuse("give the nodes with --nodelist"),
  F: refuse("give the nodes with --nodelist"),
};

/**
 * Every long flag of sbatch 22.05, for getopt's unique prefixes (`#SBATCH --tasks=1` is
 * --tasks-per-node=1 to sbatch; `--ntasks-per=2` is ambiguous, and refused).
 */
export const SBATCH_LONG_FLAGS = [
  "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint", "clusters", "comment", "constraint", "container",
  "contiguous", "core-spec", "cores-per-socket", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution",
  "error", "exclude", "exclusive", "export", "export-file", "extra-node-info", "get-user-env", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
  "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "hint", "hold", "ignore-pbs", "input", "job-name", "kill-on-invalid-dep", "licenses",
  "mail-type", "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nice", "no-kill", "no-requeue", "nodefile",
  "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "open-mode", "output", "overcommit",
  "oversubscribe", "parsable", "partition", "power", "prefer", "priority", "profile", "propagate", "qos", "quiet", "reboot", "requeue", "reservation",
  "signal", "sockets-per-node", "spread-job", "switches", "tasks-per-node", "test-only", "thread-spec", "threads-per-core", "time", "time-min", "tmp",
  "tres-per-task", "uid", "usage", "use-min-nodes", "verbose", "version", "wait", "wait-all-nodes", "wckey", "wrap",
];

/**
 * getopt_long's reading of `--name`: the flag itself, or the one flag of `names` it begins, as
 * sbatch reads it; an error if it begins several.
 */
export function longFlag(name: string, names: readonly string[]): string | { error: string } {
  if (names.includes(name)) return name;
  const matches = names.filter((n) => n.startsWith(name));
  if (matches.length > 1) return { error: `--${name} is ambiguous: it may be ${matches.map((m) => `--${m}`).join(", ")}` };
  return matches[0] ?? name;
}

/** srun's own flags that ebb srun does not map to ebb run, inside a job. */
export const SRUN_ONLY: Record<string, SlurmOnly> = {
  ...COMMON,
  partition: ignore("a step runs in its job's partition"),
  p: ignore("a step runs in its job's partition"),
  mem: ignore(STEP_RESOURCES),
  "mem-per-cpu": ignore(STEP_RESOURCES),
  "mem-per-gpu": ignore(STEP_RESOURCES),
  gres: ignore(STEP_RESOURCES),
  gpus: ignore(STEP_RESOURCES),
  G: ignore(STEP_RESOURCES),
  "gpus-per-node": ignore(STEP_RESOURCES),
  "gpus-per-task": ignore(STEP_RESOURCES),
  "gpus-per-socket": ignore(STEP_RESOURCES),
  "cpus-per-gpu": ignore(STEP_RESOURCES),
  "tres-per-task": ignore(STEP_RESOURCES),
  mincpus: ignore(STEP_RESOURCES),
  constraint: ignore(STEP_RESOURCES),
  C: ignore(STEP_RESOURCES),
  verbose: same("ebb run says little, whatever it is asked"),
  v: same("ebb run says little, whatever it is asked"),
  wait: ignore("the other ranks of the step run to their end"),
  W: ignore("the other ranks of the step run to their end"),
  signal: refuse("ebb sends signals to a job (sbatch --signal), not to a step"),
  pty: refuse("ebb does not give ranks a terminal", false),
  x11: refuse("ebb forwards no X11", false),
  bcast: refuse("ebb does not copy programs to the nodes"),
  "send-libs": { value: true, when: (v) => /^no?$/i.test(v), refuse: "ebb does not copy programs to the nodes" },
  "quit-on-interrupt": same("one Ctrl-C ends the step here"),
  q: same("one Ctrl-C ends the step here"),
  "accel-bind": ignore("ebb does not bind GPUs or NICs to ranks"),
  "task-epilog": refuse("ebb runs no task prolog or epilog"),
  "task-prolog": refuse("ebb runs no task prolog or epilog"),
  epilog: refuse("ebb runs no task prolog or epilog"),
  prolog: refuse("ebb runs no task prolog or epilog"),
  "no-allocate": refuse("a step runs in its job's allocation", false),
  Z: refuse("a step runs in its job's allocation", false),
  "test-only": refuse("ebb run starts its step; ebb submit --test-only tells when a job would start", false),
  // srun takes them (for a job it allocates) and says nothing inside a job.
  "mail-type": same("ebb sends no mail", true),
  "mail-user": same("ebb sends no mail", true),
};

/** What an unknown flag of a Slurm command line is (met by command.ts parse's onUnknown): its name, its entry in `table`, its value, and how many of the next words it took. */
export function slurmFlag(flag: string, rest: readonly string[], table: Record<string, SlurmOnly>): { name: string; entry?: SlurmOnly; value?: string; shown: string; took: number } {
  const long = flag.startsWith("--");
  const name = long ? flag.slice(2).replace(/=.*$/, "") : flag.slice(1, 2);
  const entry = table[name];
  const attached = long ? (flag.includes("=") ? flag.slice(flag.indexOf("=") + 1) : undefined) : flag.length > 2 ? flag.slice(2).replace(/^=/, "") : undefined;
  const took = entry?.value && attached === undefined && rest[0] !== undefined ? 1 : 0;
  const value = attached ?? (took ? rest[0] : undefined);
  return { name, entry, value, shown: took ? `${flag} ${rest[0]}` : flag, took };
}

/** Why ebb's commands do not have Slurm's flag `name`, if it is one: said when someone reaches for it. */
export function slurmOnlyReason(name: string): string | undefined {
  const e = SBATCH_ONLY[name] ?? SRUN_ONLY[name];
  return e?.ignore ?? e?.refuse ?? e?.same;
}
