/**
 * `srun` in an ebb job: the agent puts an `srun` command first on every job process's PATH
 * (roles/agent/ebb-command.ts: `exec ebb srun "$@"`), so that a Slurm batch script's `srun` runs
 * a step of its job. srun's flags become ebb run's (`srunToRun`, pure), with srun's defaults where
 * they differ from ebb run's: the task counts of the job (SLURM_NTASKS, SLURM_NTASKS_PER_NODE), and
 * a failed rank that leaves the others running, the step's exit code the highest of its ranks'.
 * The flags of srun that change nothing here are accepted with a warning; those that would change
 * what the step does, and that ebb does not have, are refused with the reason (slurm-flags.ts).
 */
import { readFileSync } from "node:fs";
import { defineArgs, defineCommand, parse, runCommand, type Parsed } from "./command.ts";
import { loadCommand } from "./commands.ts";
import { UsageError } from "./errors.ts";
import { multiProgScript } from "./multi-prog.ts";
import { distributionFlag, distributionVars } from "./distribution.ts";
import { arbitraryLayout, arbitraryNames } from "./arbitrary.ts";
import { slurmFlag, SRUN_ONLY } from "./slurm-flags.ts";
import { expandHostlist } from "../util/hostlist.ts";
import { perNodeCounts } from "../roles/slurm-env.ts";
import { err } from "../util/stdio.ts";
import { VERSION } from "../util/version.ts";

const args = defineArgs({
  ntasks: { type: "string", alias: "n", description: "Number of tasks (default: the job's, SLURM_NTASKS; else one per node)", valueHint: "N" },
  nodes: { type: "string", alias: "N", description: "Number of nodes (default: all of the job's, as many as the tasks need)", valueHint: "N" },
  "ntasks-per-node": { type: "string", alias: "tasks-per-node", description: "Tasks per node (default: the job's, SLURM_NTASKS_PER_NODE)", valueHint: "K" },
  "cpus-per-task": { type: "string", alias: "c", description: "CPUs per task: the ranks' SLURM_CPUS_PER_TASK (default: the job's)", valueHint: "N" },
  label: { type: "boolean", alias: "l", description: "Prefix every output line with its rank" },
  unbuffered: { type: "boolean", alias: "u", description: "Each rank's output as it comes (default: a line at a time)" },
  "job-name": { type: "string", alias: "J", description: "The step's name: its ranks' SLURM_JOB_NAME", valueHint: "NAME" },
  output: { type: "string", alias: "o", description: "The ranks' output in this file: %j job, %s step, %J job.step, %x job name, %u user, %A/%a array ids, %t a file per task, %n or %N per node", valueHint: "FILE" },
  error: { type: "string", alias: "e", description: "The ranks' errors in this file (same patterns)", valueHint: "FILE" },
  "open-mode": { type: "string", description: "truncate (default) or append to the output files", valueHint: "MODE" },
  chdir: { type: "string", alias: "D", description: "Start the ranks in this directory", valueHint: "DIR" },
  input: { type: "string", alias: "i", description: "Which tasks read srun's standard input: all (the default), none, or one task id; or a file every task reads (%t a file per task, %n or %N per node)", valueHint: "all|none|ID|FILE" },
  time: { type: "string", alias: "t", description: "The step's own time limit (whole minutes, as Slurm), within the job's", valueHint: "TIME" },
  export: { type: "string", description: "Environment the ranks get: ALL (default), NONE, or VAR[=value],...", valueHint: "ALL|NONE|VARS" },
  mpi: { type: "string", description: "pmi2, or none (the default: ebb serves PMI-1 and PMI-2 either way); not pmix", valueHint: "TYPE" },
  "cpu-bind": { type: "string", alias: "cpu_bind", description: "none or cores (ebb run --cpu-bind where this ebb has it)", valueHint: "TYPE" },
  "kill-on-bad-exit": { type: "boolean", alias: "K", description: "A failed rank kills the others (=1); without it, or =0, they run on", negativeDescription: "--kill-on-bad-exit=0: a failed rank leaves the others running (the default)" },
  overcommit: { type: "boolean", alias: "O", description: "Allow more tasks than the nodes have CPUs" },
  "ntasks-per-gpu": { type: "string", description: "Show each task one of the job's GPUs on its node, N tasks to a GPU (default: the job's, SLURM_NTASKS_PER_GPU)", valueHint: "N" },
  distribution: { type: "string", alias: "m", description: "block (default), cyclic or plane=N: how task ids go over the nodes (default: the job's, SLURM_DISTRIBUTION); the socket and core levels and ,Pack are accepted with a warning", valueHint: "DIST" },
  jobid: { type: "string", description: "The job to run in: only the job this runs in", valueHint: "ID" },
  "multi-prog": { type: "boolean", description: "Each rank runs its line of the configuration file given in place of the program (%t rank, %o offset)" },
  nodelist: { type: "string", alias: "w", description: "Nodes of the job the step must run on (with -N, the job's first others too)", valueHint: "NODES" },
  relative: { type: "string", alias: "r", description: "Run on the job's nodes from its N-th (0 the first): -N of them, else all from there", valueHint: "N" },
  exclude: { type: "string", alias: "x", description: "Run on the job's nodes but these: -N of them, else all the others", valueHint: "NODES" },
  exact: { type: "boolean", description: "The step holds a CPU per task (times -c) of the job's while it runs, and waits while the job's other --exact steps hold them (ebb run --exact)" },
  exclusive: { type: "boolean", description: "Inside a job, as --exact" },
  overlap: { type: "boolean", description: "The step shares the job's CPUs with its other steps (the default here); with --exact, it holds none" },
  quiet: { type: "boolean", alias: "Q", description: "Say nothing of an --exact step's wait for CPUs" },
});

/** A refusal in srun's own words and with its exit status (getopt's, 255; a step it cannot create, 1): `message` follows "srun: ". */
export class SrunRefusal extends UsageError {
  constructor(
    message: string,
    readonly code: number,
    /** srun's warnings said before it refused (as srun says them while it reads its flags). */
    readonly warnings: readonly string[] = [],
  ) {
    super(message);
  }
}

/** What srun's flags ask ebb run for: its arguments, and warnings for the flags that change nothing here. */
export interface SrunPlan {
  run: string[];
  warnings: string[];
  /** Variables to set in srun's environment that its --export names without a value: theirs has a comma (SLURM_DISTRIBUTION=block,pack), which --export's list cannot carry. */
  env?: Record<string, string>;
}

/**
 * srun's command line as ebb run's, inside job `env.EBB_JOB_ID` (`env`: the caller's environment,
 * for srun's defaults and the job's nodes).
 */
export function srunToRun(argv: readonly string[], env: Record<string, string | undefined>, read: (file: string) => string = (f) => readFileSync(f, "utf8")): SrunPlan {
  const warnings: string[] = [];
  const refusals: string[] = [];
  // --kill-on-bad-exit takes an optional value (getopt's optional_argument): 1 when it is missing.
  const words = argv.map((w) => (w.startsWith("--kill-on-bad-exit=") ? (w.endsWith("=0") ? "--no-kill-on-bad-exit" : w.endsWith("=1") ? "--kill-on-bad-exit" : w) : w));
  const a: Parsed<typeof args> = parse("srun", args, words, {
    stopAtPositional: true,
    onUnknown: (flag, rest) => {
      const f = slurmFlag(flag, rest, SRUN_ONLY);
      if (!f.entry) throw new SrunRefusal(`${flag.startsWith("--") ? `unrecognized option '${flag}'` : `invalid option -- '${flag.slice(1, 2)}'`}\nTry "srun --help" for more information`, 255);
      if (f.entry.same !== undefined || (f.value !== undefined && f.entry.when?.(f.value))) return f.took;
      if (f.entry.refuse) refusals.push(`${f.shown}: ${f.entry.refuse}`);
      else warnings.push(`${f.shown} is ignored: ${f.entry.ignore}`);
      return f.took;
    },
  });
  if (refusals.length > 0) throw new UsageError(refusals.join("; "));
  if (a.distribution !== undefined && /^arbitrary$/i.test(a.distribution.split(/[:,]/)[0]!)) {
    // A task on each name of the list, as the step's nodes and tasks per node (arbitrary.ts).
    const jobNodesList = (env.EBB_JOB_NODELIST ?? "").split(",").filter(Boolean);
    const names = arbitraryNames(env.SLURM_HOSTFILE, a.nodelist, read);
    const layout = arbitraryLayout(names, jobNodesList, a.ntasks === undefined ? undefined : Number(a.ntasks));
    Object.assign(a, { distribution: "block", nodelist: layout.nodelist, nodes: String(layout.nodes), ntasks: String(layout.nodes * layout.tasksPerNode), "ntasks-per-node": String(layout.tasksPerNode) });
  }
  const command = a._;
  if (command.length === 0) throw new SrunRefusal("fatal: No command given to execute.", 1);
  const run: string[] = [];
  const flag = (name: string, value?: string) => run.push(value === undefined ? `--${name}` : `--${name}=${value}`);
  const job = env.EBB_JOB_ID;
  if (a.jobid !== undefined && a.jobid !== job) throw new UsageError(`--jobid=${a.jobid}: srun here runs steps of job ${job ?? "(none: not inside an ebb job)"} only`);
  let nodeCount: string | undefined;
  if (a.nodes !== undefined) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(a.nodes);
    if (!m || (m[2] !== undefined && m[2] !== m[1])) throw new UsageError(`--nodes=${a.nodes}: a step takes a node count, not a range`);
    nodeCount = m[1];
  }
  const jobNodes = (env.EBB_JOB_NODELIST ?? "").split(",").filter(Boolean);
  if (nodeCount !== undefined && jobNodes.length > 0 && Number(nodeCount) > jobNodes.length) throw new SrunRefusal(`error: Only allocated ${jobNodes.length} nodes asked for ${nodeCount}`, 1);
  // As srun: fewer tasks than nodes (-N's, else the job's) take as many nodes as tasks, whichever nodes -w, -r or -x name.
  const wanted = nodeCount ?? env.SLURM_NNODES;
  if (a.ntasks !== undefined && wanted !== undefined && Number(a.ntasks) < Number(wanted)) {
    warnings.push(`can't run ${a.ntasks} processes on ${wanted} nodes, setting nnodes to ${a.ntasks}`);
    nodeCount = a.ntasks;
  }
  const placed = stepNodes(a, jobNodes, nodeCount === undefined ? undefined : Number(nodeCount));
  // -r and -x give the step its nodes; -w only nodes it must have, its count as without it.
  if (a.nodelist === undefined) nodeCount ??= placed?.length.toString();
  if (nodeCount !== undefined) flag("nodes", nodeCount);
  // srun's defaults inside a job: the job's task counts, from its environment (with -N too: srun
  // -N 1 in a job of -N 3 -n 3 asks for 3 tasks on one node, which its one CPU there refuses).
  const ntasks = a.ntasks ?? env.SLURM_NTASKS;
  if (ntasks !== undefined) flag("ntasks", ntasks);
  let perNode = a["ntasks-per-node"] ?? (a.ntasks === undefined ? env.SLURM_NTASKS_PER_NODE : undefined);
  // As srun: a task count (the job's too) that --ntasks-per-node does not divide into on the step's
  // nodes wins, with a warning when it is more than one node's count (-n 3 on 2 nodes at 2 a node).
  const nodes = nodeCount ?? env.SLURM_NNODES;
  if (perNode !== undefined && ntasks !== undefined && nodes !== undefined && Number(perNode) !== Math.floor(Number(ntasks) / Number(nodes))) {
    if (Number(ntasks) > Number(perNode)) warnings.push(`can't honor --ntasks-per-node set to ${perNode} which doesn't match the requested tasks ${ntasks} with the number of requested nodes ${nodes}. Ignoring --ntasks-per-node.`);
    perNode = undefined;
  }
  // As Slurm 22.05's srun: more tasks (times -c) than the job's CPUs on the step's nodes hold are
  // refused; a count per node some of them cannot hold is capped there, the rest going round the
  // nodes (the controller's layout: -N 4 -n 8 --ntasks-per-node=2 on 4,2,1,1 CPUs runs 3,3,1,1).
  const perTask = Number(a["cpus-per-task"] ?? env.SLURM_CPUS_PER_TASK ?? 1);
  // SLURM_OVERCOMMIT (sbatch -O's job sets it) is -O, whatever its value, as srun reads it.
  const overcommit = a.overcommit === true || env.SLURM_OVERCOMMIT !== undefined;
  const cpus = stepCpus(env.SLURM_JOB_CPUS_PER_NODE, jobNodes, placed, nodeCount === undefined ? undefined : Number(nodeCount));
  if (!overcommit && ntasks !== undefined && cpus !== undefined && Number(ntasks) * perTask > cpus)
    throw new SrunRefusal(`error: Unable to create step for job ${job}: More processors requested than permitted`, 1, warnings);
  if (perNode !== undefined) flag("tasks-per-node", perNode);
  if (a["cpus-per-task"] !== undefined && !/^[1-9]\d{0,5}$/.test(a["cpus-per-task"])) throw new UsageError(`--cpus-per-task=${a["cpus-per-task"]}: expected a whole number of CPUs`);
  // srun's default: the job's (sbatch -m sets SLURM_DISTRIBUTION); its ranks see what it used.
  const distText = a.distribution ?? env.SLURM_DISTRIBUTION;
  const dist = distText === undefined ? undefined : distributionFlag(distText, a.distribution === undefined ? "SLURM_DISTRIBUTION" : "--distribution", env.SLURM_DIST_PLANESIZE);
  // The job's was said at submission (ebb submit): its steps take it quietly.
  if (dist && a.distribution !== undefined) warnings.push(...dist.warnings);
  if (dist?.dist) flag("distribution", dist.dist.kind === "plane" ? `plane=${dist.dist.size}` : dist.dist.kind);
  const distVars = dist ? Object.entries(distributionVars(dist)) : [];
  const distExports = distVars.map(([k, v]) => (v.includes(",") ? k : `${k}=${v}`));
  const byName = Object.fromEntries(distVars.filter(([, v]) => v.includes(",")));
  if (a["ntasks-per-gpu"] !== undefined && !/^[1-9]\d{0,4}$/.test(a["ntasks-per-gpu"])) throw new UsageError(`--ntasks-per-gpu=${a["ntasks-per-gpu"]}: expected a whole number of tasks`);
  // The ranks' binding reads it (ebb run: StepSpec.tasksPerGpu); the job's, from sbatch, is in the environment already.
  const perGpu = a["ntasks-per-gpu"] !== undefined ? [`SLURM_NTASKS_PER_GPU=${a["ntasks-per-gpu"]}`] : [];
  // sbatch --export=NONE's job tells its steps so (SLURM_EXPORT_ENV): srun's ranks get none of the batch shell's variables either.
  const exportSpec = a.export ?? env.SLURM_EXPORT_ENV;
  const exports = [exportSpec ?? "ALL", ...(a["cpus-per-task"] !== undefined ? [`SLURM_CPUS_PER_TASK=${a["cpus-per-task"]}`] : []), ...perGpu, ...distExports];
  if (exports.length > 1 || exportSpec !== undefined) flag("export", exports.join(","));
  if (a.label) flag("label");
  if (a.unbuffered) flag("unbuffered");
  if (overcommit) flag("overcommit");
  if (a["job-name"] !== undefined) flag("job-name", a["job-name"]);
  if (a.output !== undefined) flag("output", a.output);
  if (a.error !== undefined) {
    if (a.output === undefined) throw new UsageError("--error without --output: ebb writes a step's output to a file only with --output");
    flag("error", a.error);
  }
  if (a["open-mode"] !== undefined) flag("open-mode", a["open-mode"]);
  if (a.chdir !== undefined) flag("chdir", a.chdir);
  if (a.time !== undefined) flag("time", a.time);
  // srun's default: every task reads srun's standard input; a file, each task opens itself.
  const input = a.input ?? "all";
  const inputFile = input !== "all" && input !== "none" && !/^\d{1,9}$/.test(input) ? input : undefined;
  flag("input", inputFile === undefined ? input : "none");
  if (a.mpi !== undefined) {
    if (/^pmix/.test(a.mpi)) throw new UsageError(`--mpi=${a.mpi}: ebb serves PMI-1 and PMI-2, not PMIx; MPICH and Intel MPI use PMI-2 (--mpi=pmi2)`);
    // Slurm's pmi2 plugin serves PMI-1 too (Debian's MPICH speaks only PMI-1), so neither value limits what ebb serves.
    if (a.mpi !== "pmi2" && a.mpi !== "none") throw new UsageError(`--mpi=${a.mpi}: expected pmi2 or none`);
  }
  const bind = a["cpu-bind"]?.split(",").filter((w) => w !== "verbose" && w !== "v" && w !== "quiet" && w !== "q");
  if (bind !== undefined && bind.length > 0) {
    const kind = bind.length === 1 && (["none", "no"].includes(bind[0]!) ? "none" : CPU_BIND_CORES.includes(bind[0]!) ? "cores" : undefined);
    if (!kind) throw new UsageError(`--cpu-bind=${a["cpu-bind"]}: ebb binds each rank to its own cores (cores) or not at all (none); it takes no CPU lists or masks`);
    if (kind === "cores" && !["cores", "core", "threads", "thread"].includes(bind[0]!)) warnings.push(`--cpu-bind=${a["cpu-bind"]} binds each rank to its own cores here`);
    flag("cpu-bind", kind);
  }
  flag(a["kill-on-bad-exit"] ? "kill-on-bad-exit" : "no-kill-on-bad-exit");
  flag("say-ends", "srun");
  // A step's --exclusive is --exact (Slurm 21.08+): it holds its CPUs, and waits for them, in srun's words.
  // As Slurm 22.05's srun: --overlap refuses --exclusive and wins over --exact.
  if (a.exclusive && a.overlap) throw new UsageError("--exclusive and --overlap are mutually exclusive");
  if ((a.exact || a.exclusive) && !a.overlap) {
    flag("exact");
    if (a["cpus-per-task"] !== undefined) flag("cpus-per-task", a["cpus-per-task"]);
    flag("say-waits", a.quiet ? "none" : "srun");
  }
  if (placed) flag("nodelist", placed.join(","));
  if (a["multi-prog"]) {
    if (command.length > 1) throw new UsageError(`--multi-prog takes its configuration file alone, not ${command.slice(1).join(" ")}`);
    let text: string;
    try {
      text = read(command[0]!);
    } catch {
      throw new UsageError(`Could not open multi_prog config file ${command[0]}`);
    }
    if (text.includes("\0")) throw new UsageError(`--multi-prog ${command[0]}: a program, not a configuration file (lines of ranks, program, arguments)`);
    const script = multiProgScript(text, command[0]!, ntasks === undefined ? undefined : Number(ntasks));
    return { run: [...run, "--", ...readingFrom(inputFile, ["sh", "-c", script, "srun-multi-prog"])], warnings, ...(Object.keys(byName).length > 0 ? { env: byName } : {}) };
  }
  return { run: [...run, "--", ...readingFrom(inputFile, command)], warnings, ...(Object.keys(byName).length > 0 ? { env: byName } : {}) };
}

/**
 * The job's CPUs on the nodes a step runs on (SLURM_JOB_CPUS_PER_NODE's, in the job's order): those
 * `placed` names and the job's first others up to `count`, else the job's first `count`, else all.
 * Undefined when the job's counts are not known for each of its nodes.
 */
function stepCpus(perNode: string | undefined, jobNodes: readonly string[], placed: readonly string[] | undefined, count: number | undefined): number | undefined {
  if (perNode === undefined) return undefined;
  const cpus = perNodeCounts(perNode);
  if (cpus.length !== jobNodes.length) return undefined;
  const want = count ?? placed?.length ?? jobNodes.length;
  const picked = new Set(placed);
  for (const n of jobNodes) if (picked.size < want) picked.add(n);
  return jobNodes.reduce((sum, n, i) => sum + (picked.has(n) ? cpus[i]! : 0), 0);
}

/** srun's --cpu-bind ways that ebb's binding to each rank's own cores stands for (socket and locality-domain levels name what ebb's nodes do not have). */
const CPU_BIND_CORES = ["cores", "core", "threads", "thread", "rank", "sockets", "socket", "ldoms", "ldom", "boards", "board", "rank_ldom"];

/**
 * The nodes of the job a step must run on, when srun names them: -w (the nodes it must have; it
 * takes the job's first others to reach its count), -r N (the job's nodes from its N-th), -x
 * (the job's nodes but those); undefined when it names none.
 */
function stepNodes(a: { nodelist?: string; relative?: string; exclude?: string }, have: readonly string[], count: number | undefined): string[] | undefined {
  const given = [a.nodelist !== undefined && "--nodelist", a.relative !== undefined && "--relative", a.exclude !== undefined && "--exclude"].filter(Boolean);
  if (given.length > 1) throw new UsageError(`give one of --nodelist, --relative and --exclude, not ${given.join(" and ")}`);
  const list = (flag: string, value: string) => {
    const nodes = expandHostlist(value);
    if ("error" in nodes) throw new UsageError(`${flag}: ${nodes.error}`);
    const strangers = nodes.filter((n) => !have.includes(n));
    if (strangers.length > 0) throw new UsageError(`${flag}=${value}: ${strangers.join(",")} ${strangers.length === 1 ? "is" : "are"} not among the job's nodes (${have.join(",") || "none"})`);
    return nodes;
  };
  if (a.nodelist !== undefined) return list("--nodelist", a.nodelist);
  let from: string[];
  if (a.relative !== undefined) {
    if (!/^\d{1,6}$/.test(a.relative)) throw new UsageError(`--relative=${a.relative}: expected a node's place in the job, 0 the first`);
    const r = Number(a.relative);
    if (r >= have.length) throw new UsageError(`--relative=${r}: the job has ${have.length} node${have.length === 1 ? "" : "s"} (${have.join(",") || "none"}), counted from 0`);
    from = have.slice(r);
  } else if (a.exclude !== undefined) {
    const out = new Set(list("--exclude", a.exclude));
    from = have.filter((n) => !out.has(n));
    if (from.length === 0) throw new UsageError(`--exclude=${a.exclude} leaves none of the job's nodes (${have.join(",")})`);
  } else return undefined;
  if (count !== undefined && count > from.length) throw new UsageError(`${given[0]}: ${count} nodes asked for, ${from.length} of the job's are there (${from.join(",")})`);
  return from.slice(0, count ?? from.length);
}

/** srun -i's file patterns that stand for a rank's values, as the shell reads them in the rank. */
const RANK_PATTERNS: Record<string, string> = { t: "$SLURM_PROCID", n: "$SLURM_NODEID", N: "$SLURMD_NODENAME", j: "$SLURM_JOB_ID", s: "$SLURM_STEP_ID", J: "$SLURM_JOB_ID.$SLURM_STEP_ID", u: "$SLURM_JOB_USER", x: "$SLURM_JOB_NAME", "%": "%" };

/**
 * `command` with its standard input from `file` (srun -i FILE: every task reads it, `%t` its own),
 * opened by a shell in each rank: relative to the step's directory, a missing file failing the
 * rank with the shell's words. The name's text is quoted into the shell's line; the command is
 * the shell's arguments, never read as its code.
 */
export function readingFrom(file: string | undefined, command: readonly string[]): string[] {
  if (file === undefined) return [...command];
  // Each literal piece is quoted; the patterns become the rank's variables.
  const quote = (text: string) => (text === "" ? "" : `'${text.replaceAll("'", `'\\''`)}'`);
  let word = "";
  let last = 0;
  for (const m of file.matchAll(/%(.)/g)) {
    const v = RANK_PATTERNS[m[1]!];
    if (v === undefined) throw new UsageError(`--input=${file}: %${m[1]} is no pattern of srun's file names here (%t, %n, %N, %j, %s, %J, %u, %x, %%)`);
    word += quote(file.slice(last, m.index)) + (v === "%" ? "%" : `"${v}"`);
    last = m.index + 2;
  }
  word += quote(file.slice(last));
  return ["sh", "-c", `exec <${word} && exec "$@"`, "srun-input", ...command];
}

export default defineCommand({
  meta: {
    name: "srun",
    description:
      "srun inside an ebb job (on every job process's PATH): runs a step with ebb run, with srun's flags and defaults (the job's task counts; a failed rank leaves the others running). srun's flags that change nothing here are accepted with a warning; those that would, refused with the reason.",
    hidden: true,
  },
  args: { ...args, command: { type: "positional", variadic: true, description: "The program and its arguments" } },
  stopAtPositional: true,
  ownParser: true,
  run: async ({ raw }) => {
    const runCmd = await loadCommand("run");
    let plan: SrunPlan;
    try {
      if (process.env.EBB_JOB_ID === undefined) throw new UsageError("srun here runs steps inside an ebb job; outside one, use ebb run");
      plan = srunToRun(raw, process.env);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      if (e instanceof SrunRefusal) for (const w of e.warnings) err(`srun: Warning: ${w}\n`);
      err(e instanceof SrunRefusal ? `srun: ${e.message}\n` : `srun: error: ${e.message}\n`);
      process.exit(e instanceof SrunRefusal ? e.code : 2);
    }
    for (const w of plan.warnings) err(`srun: Warning: ${w}\n`);
    Object.assign(process.env, plan.env);
    await runCommand(runCmd, plan.run, VERSION);
  },
});
