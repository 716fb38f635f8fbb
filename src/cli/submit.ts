import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { parseArraySpec } from "../domain/array.ts";
import { parseDependency } from "../domain/dependency.ts";
import type { JobSubmit } from "../api/schemas.ts";
import { defineArgs, defineCommand, parse, type Parsed } from "./command.ts";
import { client, CommandError, controllerArgs, elasticArgs, elasticFields, exportEnv, exportsAll, guard, hostlistFlag, intFlag, openModeFlag, parentSlurmVars, printJson, timeLimitFlag, UsageError, whenFlag } from "./common.ts";
import { parseSignalSpec } from "../domain/job-options.ts";
import { sbatchOnlyFlag, sbatchParsable, scriptFlags, sharedByUser } from "./directives.ts";
import { sbatchEnvWords } from "./sbatch-env.ts";
import { distributionFlag, distributionVars } from "./distribution.ts";
import { partitionChoice } from "./partition-choice.ts";
import { allMemoryWarning, resourceArgs, resourceFields, tasksPerGpuFlag, type ResourceFlags } from "./resources.ts";
import { exitStatus, jobIds, waitForJobs } from "./waiting.ts";
import { NODE_COUNT_MARK } from "./scontrol-job.ts";
import { err, isTerminal, out } from "../util/stdio.ts";

/** What describes the job: the command line's flags, and those of #EBB / #SBATCH lines. */
export const jobArgs = defineArgs({
  nodes: { type: "string", alias: "N", description: "Number of nodes, or a range MIN-MAX (the job starts at any size in it)", valueHint: "N" },
  ntasks: { type: "string", alias: "n", description: "Number of tasks (EBB_NTASKS; steps default to it)", valueHint: "N" },
  "tasks-per-node": { type: "string", alias: "ntasks-per-node", description: "Tasks per node", valueHint: "K" },
  ...resourceArgs,
  time: { type: "string", alias: "t", description: "Time limit: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS", valueHint: "TIME" },
  overcommit: { type: "boolean", alias: "O", description: "Allow more tasks than the nodes have CPUs" },
  distribution: { type: "string", alias: "m", description: "How the job's steps number their tasks over the nodes unless they say (SLURM_DISTRIBUTION, srun's default): block (default), cyclic, plane=N", valueHint: "DIST" },
  output: { type: "string", alias: "o", description: "Output file: %j job id, %x name, %A array id, %a task id, %u user, %N first node, %% a % (default ebb-%j.out, arrays ebb-%A_%a.out)", valueHint: "FILE" },
  error: { type: "string", alias: "e", description: "Error file, same patterns (default: with the output)", valueHint: "FILE" },
  "job-name": { type: "string", alias: "J", description: "Job name (default: the script's file name)", valueHint: "NAME" },
  array: { type: "string", alias: "a", description: "A job array: 0-15, 1,3,5, 1-9:2; %N runs at most N tasks at once (EBB_ARRAY_TASK_ID...)", valueHint: "SPEC" },
  dependency: { type: "string", alias: "d", description: "Start after other jobs: afterok:ID[:ID..], afternotok:ID, afterany:ID, after:ID, singleton; ',' all, '?' any", valueHint: "DEPS" },
  "kill-on-invalid-dep": { type: "string", description: "yes: cancel the job once its dependency can never be met; no (the default): it waits, saying so (DependencyNeverSatisfied)", valueHint: "yes|no" },
  hold: { type: "boolean", alias: "H", description: "Submit held: not started until `ebb release ID`" },
  chdir: { type: "string", alias: "D", description: "Run the script in this directory (default: the current one); relative output files are relative to it", valueHint: "DIR" },
  export: { type: "string", description: "Environment the job gets: ALL (default), NONE, or VAR[=value],... (add ALL to keep the rest)", valueHint: "ALL|NONE|VARS" },
  exclude: { type: "string", alias: "x", description: "Nodes the job must not use, e.g. node[01-02],node07", valueHint: "NODES" },
  nodelist: { type: "string", alias: "w", description: "Nodes the job must use, all of them (it gets at least as many)", valueHint: "NODES" },
  partition: { type: "string", alias: "p", description: "The partition to run in, on its nodes only (default: the default one; ebb partitions lists them)", valueHint: "NAME" },
  begin: { type: "string", alias: "b", description: "Do not start before: now+10minutes, 16:00, 2030-01-31T08:00, tomorrow...", valueHint: "TIME" },
  signal: { type: "string", description: "Send SIG (USR1, SIGUSR1, 10) SECONDS (default 60) before the time limit: to the job's steps, or with B: to the batch shell only", valueHint: "[B:]SIG[@SECONDS]" },
  requeue: { type: "boolean", description: "If a node of the job fails, put it back in the queue: it starts again (SLURM_RESTART_COUNT counts)", negativeDescription: "A job whose node fails ends NODE_FAIL (the default)" },
  "open-mode": { type: "string", description: "The output and error files are truncated when the job starts (default) or appended to", valueHint: "truncate|append" },
  "mail-type": { type: "string", description: "Accepted for Slurm scripts; ebb sends no mail, and says so", valueHint: "TYPES" },
  "mail-user": { type: "string", description: "Accepted for Slurm scripts; ebb sends no mail, and says so", valueHint: "ADDRESS" },
  ...elasticArgs,
});

const args = defineArgs({
  ...jobArgs,
  wrap: { type: "string", description: "Submit this shell command as the script (#!/bin/sh)", valueHint: "COMMAND" },
  wait: { type: "boolean", alias: "W", description: "Wait for the job (every task of an array) to end; exit with its exit code" },
  "test-only": { type: "boolean", description: "Do not submit: say when and where the job would start now" },
  parsable: { type: "boolean", description: "Print only the job id" },
  json: { type: "boolean", description: 'Print {"id": N}' },
  ...controllerArgs,
  script: { type: "positional", description: "The batch script ('-' or none: read it from standard input), then its arguments ($1 $2 ...)" },
});

/** The script's text and a name for the job; from a file, --wrap or standard input. */
function readScript(path: string | undefined, wrap: string | undefined): { script: string; name: string; fromFile: boolean } {
  if (wrap !== undefined) return { script: `#!/bin/sh\n${wrap}\n`, name: "wrap", fromFile: false };
  if (path === undefined || path === "-") {
    if (path === undefined && isTerminal(0)) throw new UsageError("no script given; usage: ebb submit [flags] script.sh (or --wrap CMD, or the script on standard input)");
    const script = readFileSync(0, "utf8");
    if (script.trim() === "") throw new UsageError("the script on standard input is empty");
    return { script, name: "stdin", fromFile: false };
  }
  try {
    return { script: readFileSync(path, "utf8"), name: basename(path), fromFile: true };
  } catch (e) {
    // Not a usage error: sbatch says "Unable to open file" and exits 1, as any failed submission.
    throw new CommandError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
}

/** --signal [B:]SIG[@SECONDS], checked; passed on as given. */
function signalFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const r = parseSignalSpec(value);
  if ("error" in r) throw new UsageError(`--signal: ${r.error}`);
  return value;
}

/** sbatch -m: what the job's srun steps take as their default (SLURM_DISTRIBUTION and, for plane, SLURM_DIST_PLANESIZE). */
function distributionEnv(value: string | undefined): Record<string, string> {
  if (value === undefined) return {};
  const d = distributionFlag(value);
  for (const w of d.warnings) err(`ebb submit: warning: ${w}\n`);
  return distributionVars(d);
}

/** -N 4, or -N 2-4 (Slurm's range: the job starts at any size in it). */
function nodeRange(value: string | undefined): { nodes?: number; minNodes?: number; maxNodes?: number } {
  const m = value === undefined ? null : /^(\d+)-(\d+)$/.exec(value);
  if (!m) return { nodes: intFlag(value, "--nodes") };
  const [minNodes, maxNodes] = [intFlag(m[1], "--nodes")!, intFlag(m[2], "--nodes")!];
  if (minNodes > maxNodes) throw new UsageError(`--nodes ${value}: the range goes from the fewest nodes to the most`);
  return { minNodes, maxNodes };
}

/**
 * The submission the flags (command line and directives merged) describe, each flag checked.
 * `kind`: the script's directives; a Slurm script's output goes where sbatch puts it (slurm-%j.out).
 */
export function jobSubmit(a: Record<string, unknown>, script: string, name: string, kind?: "EBB" | "SBATCH"): JobSubmit {
  const pick = (k: keyof typeof jobArgs) => a[k] as string | undefined;
  const array = pick("array");
  if (array !== undefined) {
    const r = parseArraySpec(array);
    if ("error" in r) throw new UsageError(`--array: ${r.error}`);
  }
  const dependency = pick("dependency");
  if (dependency !== undefined) {
    const r = parseDependency(dependency);
    if ("error" in r) throw new UsageError(`--dependency: ${r.error}`);
  }
  const elastic = elasticFields({ elastic: a.elastic === true, "min-nodes": pick("min-nodes"), "max-nodes": pick("max-nodes"), sizes: pick("sizes"), "sample-interval": pick("sample-interval"), "elastic-settings": pick("elastic-settings") });
  const range = nodeRange(pick("nodes"));
  const shape = { nodes: range.nodes ?? range.minNodes, tasks: intFlag(pick("ntasks"), "--ntasks"), tasksPerNode: intFlag(pick("tasks-per-node"), "--tasks-per-node") };
  const perGpu = tasksPerGpuFlag(a as ResourceFlags, shape);
  if (perGpu.tasksPerGpu !== undefined && range.minNodes !== undefined) throw new UsageError("--ntasks-per-gpu takes a node count, not a range (as Slurm's)");
  return {
    script,
    name: pick("job-name") ?? name,
    ...range,
    ...elastic,
    minNodes: elastic.minNodes ?? range.minNodes,
    maxNodes: elastic.maxNodes ?? range.maxNodes,
    tasks: shape.tasks ?? perGpu.tasks,
    tasksPerNode: intFlag(pick("tasks-per-node"), "--tasks-per-node"),
    ...resourceFields(a as ResourceFlags, shape),
    overcommit: a.overcommit === true ? true : undefined,
    timeLimit: timeLimitFlag(pick("time"), "--time"),
    output: pick("output") ?? (kind === "SBATCH" ? (array !== undefined ? "slurm-%A_%a.out" : "slurm-%j.out") : undefined),
    error: pick("error"),
    cwd: pick("chdir") !== undefined ? resolve(pick("chdir")!) : process.cwd(),
    // What the job's srun steps take as their defaults, as under Slurm. SLURM_SUBMIT_DIR is where
    // sbatch ran (its own, not a parent job's), which --chdir does not change, as Slurm's sbatch sets it;
    // SLURM_OVERCOMMIT, which srun reads as its -O: the steps of a job of more tasks than CPUs are too.
    // sbatch --export's value is its steps' default too (srun reads SLURM_EXPORT_ENV), as Slurm's sbatch sets it.
    env: { ...exportEnv(pick("export")), ...(pick("export") !== undefined ? { SLURM_EXPORT_ENV: pick("export")! } : {}), ...(kind === "SBATCH" && exportsAll(pick("export")) ? parentSlurmVars() : {}), ...distributionEnv(pick("distribution")), ...(perGpu.tasksPerGpu !== undefined ? { SLURM_NTASKS_PER_GPU: String(perGpu.tasksPerGpu) } : {}), ...(pick("nodes") !== undefined ? { [NODE_COUNT_MARK]: "1" } : {}), SLURM_SUBMIT_DIR: process.cwd(), ...(a.overcommit === true ? { SLURM_OVERCOMMIT: "1" } : {}) },
    array,
    dependency,
    killOnInvalidDep: yesNoFlag(pick("kill-on-invalid-dep"), "--kill-on-invalid-dep"),
    hold: a.hold === true ? true : undefined,
    begin: whenFlag(pick("begin"), "--begin", { future: true }),
    exclude: hostlistFlag(pick("exclude"), "--exclude"),
    nodelist: hostlistFlag(pick("nodelist"), "--nodelist"),
    partition: pick("partition"),
    signal: signalFlag(pick("signal")),
    requeue: typeof a.requeue === "boolean" ? a.requeue : undefined,
    openMode: openModeFlag(pick("open-mode"), "--open-mode"),
  };
}

/** Slurm's yes/no flag values: true for yes, undefined for no (the default) and for none given. */
function yesNoFlag(value: string | undefined, flag: string): true | undefined {
  if (value === undefined || /^no$/i.test(value)) return undefined;
  if (/^yes$/i.test(value)) return true;
  throw new UsageError(`${flag}=${value}: expected yes or no`);
}

/**
 * `ebb submit`, or `asSbatch`: the same as `ebb sbatch` (and `sbatch` in a job), which gives a job
 * without #EBB lines sbatch's defaults, as a #SBATCH script has them (slurm-%j.out, also for --wrap).
 */
export const submitCommand = (asSbatch: boolean) =>
  defineCommand({
    meta: {
      name: "submit",
      description:
        "Submit a batch script: ebb submit [-N ..] [-n ..] [-t ..] [-o FILE] script.sh. '#EBB <flags>' lines at the top of the script set flags too (or, in a script without them, '#SBATCH' lines); the command line wins.",
    },
    args,
    // As sbatch: what follows the script is not ebb's but the script's arguments.
    stopAtPositional: true,
    // ebb sbatch reads its command line as sbatch's: sbatch's flags that ebb does not have have the fates of #SBATCH lines' (sbatch -A ACCOUNT job.sh).
    ownParser: asSbatch,
    run: ({ args: parsed, raw }) =>
      guard("submit", async () => {
        const fromCommandLine: string[] = [];
        const cli = asSbatch ? parse("submit", args, raw, { stopAtPositional: true, onUnknown: sbatchOnlyFlag(fromCommandLine, "command line") }) : parsed;
        if (fromCommandLine.length > 0) err(`ebb submit: warning: ignoring sbatch flags ebb does not have: ${fromCommandLine.join(", ")}\n`);
        return submit(cli, asSbatch, asSbatch ? envFlags() : {});
      }),
  });

/** sbatch's input variables set here (SBATCH_TIMELIMIT...), read as its command line's flags. */
function envFlags(): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const { name, word } of sbatchEnvWords(process.env)) {
    try {
      if (sharedByUser(word, name, ignored)) continue;
      Object.assign(flags, parse("submit", args, [word], { stopAtPositional: true, onUnknown: sbatchOnlyFlag(ignored, name) }));
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${name}: ${e.message}`);
      throw e;
    }
  }
  if (ignored.length > 0) err(`ebb submit: warning: ignoring sbatch flags ebb does not have: ${ignored.join(", ")}\n`);
  return flags;
}

/** What ebb submit and ebb sbatch do once their flags are read; `fromEnv`: sbatch's input variables' (they win over the script's). */
async function submit(cli: Parsed<typeof args>, asSbatch: boolean, fromEnv: Record<string, unknown>): Promise<number | void> {
  // As sbatch: what follows the script is the script's, its $1 $2 ...
  const [path, ...scriptArgs] = cli._;
  if (path !== undefined && cli.wrap !== undefined) throw new UsageError(`--wrap takes no script nor arguments after it (${cli._.join(" ")}); put them in its command`);
  const { script, name, fromFile } = readScript(path, cli.wrap);
  const source = fromFile ? path! : name;
  const fromScript = cli.wrap === undefined ? scriptFlags(script, jobArgs, source) : { flags: {}, ignored: [] };
  if (fromScript.ignored.length > 0) err(`ebb submit: warning: ignoring #SBATCH flags ebb does not have: ${fromScript.ignored.join(", ")}\n`);
  const a = { ...fromScript.flags } as Record<string, unknown>;
  for (const [k, v] of [...Object.entries(fromEnv), ...Object.entries(cli)]) if (v !== undefined && k in jobArgs) a[k] = v;
  if (a["mail-type"] !== undefined || a["mail-user"] !== undefined)
    err(`ebb submit: warning: ebb sends no mail; ${(["mail-type", "mail-user"] as const).flatMap((k) => (a[k] !== undefined ? [`--${k}=${String(a[k])}`] : [])).join(" and ")} ignored (ebb wait ID, or ebb submit --wait, tells when a job ends)\n`);
  const memAll = allMemoryWarning(a as ResourceFlags);
  if (memAll) err(`ebb submit: warning: ${memAll}\n`);
  const kind = fromScript.kind ?? (asSbatch ? "SBATCH" : undefined);
  const req = { ...jobSubmit(a, script, name, kind), ...(scriptArgs.length > 0 ? { args: scriptArgs } : {}) };
  // As sbatch: fewer tasks than nodes (#SBATCH -N 2 -n 1) take as many nodes as tasks, said; ebb's own flags are refused.
  if (kind === "SBATCH" && req.tasks !== undefined && req.nodes !== undefined && req.minNodes === undefined && req.tasks < req.nodes) {
    err(`ebb submit: warning: can't run ${req.tasks} processes on ${req.nodes} nodes, setting nnodes to ${req.tasks} (as sbatch)\n`);
    req.nodes = req.tasks;
  }
  const array = req.array;
  const c = client(cli);
  req.partition = await partitionChoice(c, req.partition, (text) => err(`ebb submit: warning: ${text}\n`));
  if (cli["test-only"]) {
    const t = await c.testOnly(req);
    if (cli.json) return printJson(t);
    out(`ebb submit: ${t.message} (test only, nothing submitted)\n`);
    return t.start === null ? 1 : 0;
  }
  const { id } = await c.submit(req);
  if (cli.json) printJson({ id });
  else if (cli.parsable || (cli.wrap === undefined && sbatchParsable(script))) out(`${id}\n`);
  else out(`Submitted batch job ${id}\n`);
  if (!(cli.wait || fromEnv.wait)) return;
  const ended = await waitForJobs(c, array !== undefined ? await jobIds(c, String(id)) : [id]);
  return Math.max(0, ...ended.map(exitStatus));
}

export default submitCommand(false);
