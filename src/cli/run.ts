import { defineArgs, defineCommand } from "./command.ts";
import { PmiMode } from "../proto/step.ts";
import { run } from "../roles/launcher/run.ts";
import { client, controllerArgs, timeLimitFlag, exportEnv, openModeFlag, stepEnv, elasticArgs, elasticFields, guard, hostlistFlag, intFlag, UsageError } from "./common.ts";
import { err, isTerminal } from "../util/stdio.ts";
import { resolve } from "node:path";
import { partitionChoice } from "./partition-choice.ts";
import { allMemoryWarning, resourceArgs, resourceFields, tasksPerGpuFlag } from "./resources.ts";
import { distributionFlag } from "./distribution.ts";

const args = defineArgs({
  nodes: { type: "string", alias: "N", description: "Number of nodes (default: enough for the tasks; inside a job: all of its nodes)", valueHint: "N" },
  ntasks: { type: "string", alias: "n", description: "Number of ranks (default: one per node)", valueHint: "N" },
  "tasks-per-node": { type: "string", alias: "ntasks-per-node", description: "Ranks per node", valueHint: "K" },
  ...resourceArgs,
  overcommit: { type: "boolean", alias: "O", description: "Allow more ranks than the nodes have CPUs" },
  distribution: { type: "string", alias: "m", description: "How ranks are numbered over the nodes: block (default: a node's ranks consecutive), cyclic (one to each node in turn), plane=N (N to each node in turn); srun's socket and core levels (:block, :cyclic) and ,Pack are accepted with a warning", valueHint: "block|cyclic|plane=N" },
  time: { type: "string", alias: "t", description: "Time limit: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS; inside a job, the step's own (whole minutes, as Slurm), within the job's", valueHint: "TIME" },
  label: { type: "boolean", alias: "l", description: "Prefix every output line with its rank" },
  unbuffered: { type: "boolean", alias: "u", description: "Write each rank's output as it comes (default: a whole line at a time, so ranks' lines never mix)" },
  output: { type: "string", alias: "o", description: "The ranks' output in this file, not on the terminal: %j job id, %s step id, %J job.step, %x job name, %u user, %A/%a array ids, a file per rank with %t (the rank), per node with %n (its index in the step) or %N (its name), %% a %", valueHint: "FILE" },
  error: { type: "string", alias: "e", description: "The ranks' errors in this file (same patterns; default: with the output)", valueHint: "FILE" },
  "open-mode": { type: "string", description: "The output files are truncated first (default) or appended to", valueHint: "truncate|append" },
  chdir: { type: "string", alias: "D", description: "Start the ranks in this directory (default: the current one)", valueHint: "DIR" },
  input: { type: "string", alias: "i", description: "Which ranks read this command's standard input: a rank (default 0, as mpiexec), all (srun's default), or none (they read /dev/null)", valueHint: "RANK|all|none" },
  export: { type: "string", description: "Environment the ranks get: ALL (default), NONE, or VAR[=value],... (add ALL to keep the rest)", valueHint: "ALL|NONE|VARS" },
  "kill-on-bad-exit": { type: "boolean", alias: "K", description: "A rank that fails kills the others (the default, as mpiexec)", negativeDescription: "A rank that fails leaves the others running; the exit code is the highest of the ranks' (srun's default)" },
  "job-name": { type: "string", alias: "J", description: "Job name (default: the program's name)", valueHint: "NAME" },
  mpi: { type: "string", description: "PMI wire to serve: both (default; the client's init picks), pmi1, pmi2 or none", valueHint: "both|pmi1|pmi2|none" },
  "pmi-port": { type: "boolean", description: "Ranks reach PMI over TCP (PMI_PORT + PMI_ID) instead of an inherited socket (PMI_FD)" },
  cfg: { type: "string", description: "CFG monitoring of the ranks' communication calls: on (default) or off", valueHint: "on|off" },
  "cpu-bind": { type: "string", description: "Bind each rank to its own slice of the job's cores on its node (cores, the default, as srun) or let every rank use all of them (none)", valueHint: "cores|none" },
  "spawn-wait": { type: "string", description: "Seconds an MPI spawn may wait for idle nodes before it fails (default 30)", valueHint: "SECONDS" },
  fanout: { type: "string", description: "Fan-out of the launch tree (default 8)", valueHint: "K" },
  exclude: { type: "string", alias: "x", description: "Outside a job: nodes the allocation must not use, e.g. node[01-02]", valueHint: "NODES" },
  nodelist: { type: "string", alias: "w", description: "Outside a job: nodes the allocation must use; inside one, nodes of the job the step must run on (with -N, the job's first others too)", valueHint: "NODES" },
  partition: { type: "string", alias: "p", description: "Outside a job: the partition of the allocation (default: the default one; ebb partitions lists them)", valueHint: "NAME" },
  exact: { type: "boolean", description: "Inside a job: the step holds a CPU per rank (times -c) of the job's while it runs, and waits while the job's other --exact steps hold them (srun --exact); without it steps share the job's CPUs" },
  "say-waits": { type: "string", description: "How an --exact step's wait for CPUs is said: ebb (the default), srun (in srun's words, as ebb srun does), none", valueHint: "ebb|srun|none" },
  "say-ends": { type: "string", description: "How ranks that end badly are said: ebb (the default), or srun (srun's lines on this standard error, a program not started ending its task with execve's errno, 2 or 13, as ebb srun does)", valueHint: "ebb|srun" },
  ...elasticArgs,
  ...controllerArgs,
});

export default defineCommand({
  meta: {
    name: "run",
    description: "Run a parallel program: ebb run [-N nodes] [-n tasks] [-l] [--] CMD ARGS...  Outside a job it asks for an allocation and waits for it; inside a batch job it runs a step there.",
  },
  args: { ...args, command: { type: "positional", variadic: true, description: "The program and its arguments (flags after it are the program's)" } },
  stopAtPositional: true,
  run: ({ args: a }) =>
    guard("run", async () => {
      const command = a._;
      if (command.length === 0) throw new UsageError("no program given; usage: ebb run [-N nodes] [-n tasks] [--] CMD ARGS...");
      const mpi = PmiMode.safeParse(a.mpi ?? "both");
      if (!mpi.success) throw new UsageError(`--mpi ${a.mpi}: expected both, pmi1, pmi2 or none`);
      if (a.cfg !== undefined && a.cfg !== "on" && a.cfg !== "off") throw new UsageError(`--cfg ${a.cfg}: expected on or off`);
      const openMode = openModeFlag(a["open-mode"], "--open-mode");
      if (a.output === undefined && (a.error !== undefined || a["open-mode"] !== undefined)) throw new UsageError(`${a.error !== undefined ? "--error" : "--open-mode"} goes with --output: without it, the output is on this terminal`);
      if (a["cpu-bind"] !== undefined && a["cpu-bind"] !== "cores" && a["cpu-bind"] !== "none") throw new UsageError(`--cpu-bind ${a["cpu-bind"]}: expected cores or none`);
      const dist = a.distribution === undefined ? undefined : distributionFlag(a.distribution);
      if (dist?.dist && a.elastic) throw new UsageError(`--distribution=${a.distribution}: an elastic step's ranks are numbered in blocks over its nodes (its resizes add and remove ranks at the end)`);
      for (const w of dist?.warnings ?? []) err(`ebb run: warning: ${w}\n`);
      const insideJob = process.env.EBB_JOB_ID ? intFlag(process.env.EBB_JOB_ID, "EBB_JOB_ID") : undefined;
      if (a.exact && insideJob === undefined) throw new UsageError("--exact: a step holds CPUs of the job it runs in; outside a job ebb run makes an allocation for its step alone (run it inside one: ebb submit, or ebb run -N ... sh)");
      const sayWaits = a["say-waits"] ?? "ebb";
      if (sayWaits !== "ebb" && sayWaits !== "srun" && sayWaits !== "none") throw new UsageError(`--say-waits ${sayWaits}: expected ebb, srun or none`);
      if (a["say-ends"] !== undefined && a["say-ends"] !== "ebb" && a["say-ends"] !== "srun") throw new UsageError(`--say-ends ${a["say-ends"]}: expected ebb or srun`);
      if (a.exact && a.overcommit) throw new UsageError("--exact holds a CPU per rank; --overcommit asks for more ranks than CPUs: give one of them");
      const shape = { nodes: intFlag(a.nodes, "--nodes"), tasks: intFlag(a.ntasks, "--ntasks"), tasksPerNode: intFlag(a["tasks-per-node"], "--tasks-per-node") };
      const resources = resourceFields(a, shape);
      const perGpu = tasksPerGpuFlag(a, shape);
      const env = insideJob === undefined ? exportEnv(a.export) : stepEnv(a.export);
      // Given here, or the job's (sbatch --ntasks-per-gpu, srun's export): each rank is shown one GPU.
      if (perGpu.tasksPerGpu !== undefined) env.SLURM_NTASKS_PER_GPU = String(perGpu.tasksPerGpu);
      const tasksPerGpu = intFlag(env.SLURM_NTASKS_PER_GPU, "SLURM_NTASKS_PER_GPU", { max: 65536 });
      // --ntasks-per-gpu also shows each rank of a step its one GPU.
      // -c of an --exact step is its own: the CPUs each rank holds.
      const given = Object.keys(resourceArgs).filter((k) => a[k as keyof typeof resourceArgs] !== undefined && k !== "ntasks-per-gpu" && !(a.exact && k === "cpus-per-task"));
      const memAll = insideJob === undefined ? allMemoryWarning(a) : undefined;
      if (memAll) err(`ebb run: warning: ${memAll}\n`);
      if (insideJob !== undefined && given.length > 0) err(`ebb run: warning: ${given.map((k) => `--${k}`).join(", ")} shape a new allocation; this step runs in job ${insideJob}'s, and they are left out\n`);
      const c = client(a);
      const interactive = isTerminal(2);
      let transientShown = false;
      return run({
        client: c,
        argv: command,
        nodes: intFlag(a.nodes, "--nodes"),
        ...elasticFields(a),
        tasks: shape.tasks ?? (insideJob === undefined ? perGpu.tasks : undefined),
        tasksPerGpu,
        tasksPerNode: intFlag(a["tasks-per-node"], "--tasks-per-node"),
        distribution: dist?.dist,
        resources,
        overcommit: a.overcommit === true ? true : undefined,
        timeLimit: insideJob === undefined ? timeLimitFlag(a.time, "--time") : undefined,
        exclude: hostlistFlag(a.exclude, "--exclude"),
        nodelist: hostlistFlag(a.nodelist, "--nodelist"),
        partition: insideJob === undefined ? await partitionChoice(c, a.partition, (text) => err(`ebb run: warning: ${text}\n`)) : undefined,
        name: a["job-name"],
        label: a.label === true,
        cwd: a.chdir === undefined ? process.cwd() : resolve(a.chdir),
        output: a.output === undefined ? undefined : { path: a.output, error: a.error, append: openMode === "append" },
        keepGoing: a["kill-on-bad-exit"] === false,
        srun: a["say-ends"] === "srun",
        unbuffered: a.unbuffered === true,
        stdin: inputFlag(a.input ?? "0"),
        // A step inherits SLURM_SUBMIT_HOST from its job; an allocation is submitted from here.
        env,
        jobId: insideJob,
        fanout: intFlag(a.fanout, "--fanout", { max: 1024 }) ?? 8,
        pmi: mpi.data,
        pmiPort: a["pmi-port"] === true,
        cfg: a.cfg === "off" ? "off" : "on",
        cpuBind: a["cpu-bind"] === "none" ? "none" : undefined,
        spawnWait: intFlag(a["spawn-wait"], "--spawn-wait", { min: 0, max: 3600 }) ?? 30,
        stepTimeout: insideJob !== undefined && a.time !== undefined ? stepLimit(a.time) : mpiexecTimeout(),
        exact: a.exact === true,
        cpusPerTask: a.exact ? intFlag(a["cpus-per-task"], "--cpus-per-task", { max: 4096 }) : undefined,
        stepWaits: sayWaits === "none" ? undefined : sayWaits === "srun" ? SRUN_WAITS : EBB_WAITS,
        say: (text, opts) => {
          if (opts?.transient) {
            if (interactive) err(`\r\x1b[Kebb: ${text}`);
            else if (!transientShown) err(`ebb: ${text}\n`);
            transientShown = true;
            return;
          }
          if (interactive && transientShown) err("\r\x1b[K");
          transientShown = false;
          err(`ebb: ${text}\n`);
        },
      });
    }),
});

/** An --exact step's wait for CPUs, said as srun says it (Slurm 22.05's words; the step's id is not in them). */
const SRUN_WAITS = {
  waiting: (jobId: number) => err(`srun: Job ${jobId} step creation temporarily disabled, retrying (Requested nodes are busy)\n`),
  granted: (jobId: number) => err(`srun: Step created for job ${jobId}\n`),
};

const EBB_WAITS = {
  waiting: (_jobId: number, message: string) => err(`ebb: the step waits for CPUs (--exact): ${message}\n`),
  granted: (jobId: number, stepId: number) => err(`ebb: step ${jobId}.${stepId} has its CPUs and starts\n`),
};

/**
 * `--time` of a step inside a job: its own limit, in whole minutes as Slurm keeps them (`-t 0:30`
 * is a minute); none for 0 (UNLIMITED), the job's end bounding it either way.
 */
export function stepLimit(value: string): { seconds: number; why: string; code: number } | undefined {
  const limit = timeLimitFlag(value, "--time");
  if (limit === undefined || limit === "UNLIMITED") return undefined;
  const minutes = Math.ceil(limit / 60);
  // At most what a timer holds (2^31 ms): a longer one would fire at once; the job ends first.
  return { seconds: Math.min(minutes * 60, 2_147_483), why: `the step ran out of its time limit (${minutes} min); killing all ranks`, code: 143 };
}

/** Hydra's variable, set by MPICH's test harness (runtests) for every test; 0 means none. */
function mpiexecTimeout(): { seconds: number; why: string; code: number } | undefined {
  const seconds = intFlag(process.env.MPIEXEC_TIMEOUT, "MPIEXEC_TIMEOUT", { min: 0, max: 2_147_483 });
  return seconds ? { seconds, why: `MPIEXEC_TIMEOUT: the step ran out of its ${seconds} s; killing all ranks`, code: 255 } : undefined;
}

/** `--input`: "all", "none" (undefined: nobody reads) or a step rank. */
export function inputFlag(value: string): "all" | number | undefined {
  if (value === "all") return "all";
  if (value === "none") return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--input ${value}: expected a rank number, all or none`);
  return Number(value);
}
