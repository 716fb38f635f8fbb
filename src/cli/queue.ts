import { compressIndices } from "../domain/array.ts";
import type { JobView } from "../api/schemas.ts";
import { FINAL_STATES } from "../domain/job.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { formatDuration } from "../util/time.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, intFlag, printJson, statesFlag, table, textFlag } from "./common.ts";
import { MAX_NAME } from "../api/schemas.ts";
import { formatFlag, headed, idsFlag, jobsOf, partitionsFlag, usersFlag } from "./listing.ts";
import { FORMAT_HELP, parseFormat, renderFormat, type Format } from "./job-format.ts";
import type { StartsView } from "../api/schemas.ts";
import { jobLabel } from "./jobid.ts";
import { err, out } from "../util/stdio.ts";
import { resourcesColumn } from "./resource-text.ts";

export function elapsed(j: JobView, now = Date.now()): string {
  if (!j.startTime) return "0:00";
  const end = j.endTime ? Date.parse(j.endTime) : now;
  return formatDuration((end - Date.parse(j.startTime)) / 1000);
}

/** The nodes column: the count, an elastic job's range, and how often it was resized. */
export function nodesColumn(j: JobView): string {
  const base = j.minNodes === j.maxNodes ? String(j.nodes) : `${j.allocation.length || j.nodes} [${j.minNodes}-${j.maxNodes}]`;
  return j.resizes > 0 ? `${base} (${j.resizes} resize${j.resizes === 1 ? "" : "s"})` : base;
}

/**
 * One row per job, but an array's pending tasks that wait for the same reason share one,
 * `12_[3-10%2]`, as squeue shows them.
 */
export function queueRows(jobs: readonly JobView[], eachTask = false): { label: string; job: JobView }[] {
  const rows: { label: string; job: JobView; tasks?: number[] }[] = [];
  const groups = new Map<string, { label: string; job: JobView; tasks?: number[] }>();
  for (const j of jobs) {
    if (!eachTask && j.state === "PENDING" && j.arrayJobId !== null) {
      const key = `${j.arrayJobId}\0${j.reason}`;
      const g = groups.get(key);
      if (g) {
        g.tasks!.push(j.arrayTaskId!);
        continue;
      }
      const row = { label: "", job: j, tasks: [j.arrayTaskId!] };
      groups.set(key, row);
      rows.push(row);
      continue;
    }
    rows.push({ label: jobLabel(j), job: j });
  }
  for (const r of rows) {
    if (!r.tasks) continue;
    const limit = r.job.arrayLimit ? `%${r.job.arrayLimit}` : "";
    r.label = r.tasks.length === 1 && !limit ? `${r.job.arrayJobId}_${r.tasks[0]}` : `${r.job.arrayJobId}_[${compressIndices(r.tasks)}${limit}]`;
  }
  return rows;
}


export default defineCommand({
  meta: {
    name: "queue",
    description: "List pending and running jobs, every user's (--all: finished ones too); an array's pending tasks share a line, 12_[3-10]. Another user's command, directory and files are theirs to see",
  },
  args: {
    all: { type: "boolean", description: "Include finished jobs (with their exit codes)" },
    state: { type: "string", description: "Only these states, comma-separated (e.g. PENDING,RUNNING)", valueHint: "STATES" },
    user: { type: "string", alias: "u", description: "Only these users' jobs, comma-separated", valueHint: "USER,..." },
    me: { type: "boolean", description: "Only your own jobs (--user with your user name)" },
    partition: { type: "string", alias: "p", description: "Only jobs in these partitions, comma-separated (ebb partitions lists them)", valueHint: "NAME,..." },
    name: { type: "string", description: "Only jobs of this name (squeue -n)", valueHint: "NAME" },
    jobs: { type: "string", alias: "j", description: "Only these jobs, comma-separated (an array's id: its tasks), in any state unless --state", valueHint: "ID,..." },
    "ended-within": { type: "string", description: "A finished job only if it ended at most SECONDS ago (squeue -j shows ended jobs as long as Slurm keeps them: MinJobAge, 300 s by default)", valueHint: "SECONDS" },
    start: { type: "boolean", description: "Pending jobs with when and where each is expected to start (START_TIME, SCHEDNODES; N/A: no estimate), every running job taken to run to its limit" },
    format: { type: "string", alias: "o", description: `Columns as squeue -o, "%.10i %.8u %T %M" (%[.][WIDTH]CODE; codes: ${FORMAT_HELP}), or fields as squeue -O, JobID,User,State:10`, valueHint: "FORMAT" },
    noheader: { type: "boolean", description: "Leave out the header line" },
    "array-tasks": { type: "boolean", alias: "r", description: "A line for each of an array's pending tasks (squeue -r), not one for those that wait alike" },
    limit: { type: "string", description: "At most this many jobs, the newest (default: all, fetched 1,000 at a time)", valueHint: "N" },
    json: { type: "boolean", description: "Print the API's JSON (one entry per array task; with --start, the estimates too)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("queue", async () => {
      const ids = idsFlag(args.jobs, "--jobs");
      const state = statesFlag(args.state) ?? (args.start ? "PENDING" : args.all || ids ? undefined : "PENDING,RUNNING,ADAPTING");
      const format = args.format === undefined ? undefined : formatFlag(args.format, "--format");
      const api = client(args);
      const endedWithin = intFlag(args["ended-within"], "--ended-within", { min: 0 });
      const listed = await jobsOf(api, { state, id: ids, partition: partitionsFlag(args.partition, "--partition"), name: textFlag(args.name, "--name", MAX_NAME, "job names") }, usersFlag(args.user, args.me, "--user"), intFlag(args.limit, "--limit"));
      const jobs = endedWithin === undefined ? listed : listed.filter((j) => !j.endTime || Date.parse(j.endTime) >= Date.now() - endedWithin * 1000);
      if (args.start) {
        const starts = await api.starts();
        if (args.json) return printJson({ jobs, starts });
        out(startsText(jobs, starts, format, args.noheader));
        if (!starts.complete) err(`ebb queue: ${starts.message}\n`);
        return;
      }
      if (args.json) return printJson({ jobs });
      const now = Date.now();
      if (format) return out(renderFormat(format, queueRows(jobs, args["array-tasks"]).map(({ label, job }) => ({ job, ctx: { label, now } })), !args.noheader));
      const showExit = state === undefined || FINAL_STATES.some((s) => state.toUpperCase().includes(s));
      const rows = queueRows(jobs, args["array-tasks"]).map(({ label, job: j }) => [
        label,
        j.name.slice(0, 16),
        j.user ?? "",
        j.state,
        elapsed(j),
        formatDuration(j.timeLimit),
        nodesColumn(j),
        resourcesColumn(j),
        ...(showExit ? [j.exitCode === null ? "" : String(j.exitCode)] : []),
        j.state === "PENDING" ? `(${j.reason ?? "None"})` : j.allocation.length > 0 ? compressHostlist(j.allocation) : j.reason ? `(${j.reason})` : "",
      ]);
      out(headed(table(["JOBID", "NAME", "USER", "STATE", "TIME", "LIMIT", "NODES", "CPUS/MEM/GPUS", ...(showExit ? ["EXIT"] : []), "NODELIST(REASON)"], rows), !args.noheader));
    }),
});

/** squeue --start: pending jobs, the soonest expected start first (those without one last, N/A), each on its own line. */
export function startsText(jobs: readonly JobView[], starts: StartsView, format: Format | undefined, noheader = false, now = Date.now()): string {
  const expected = new Map(starts.jobs.map((s) => [s.id, s]));
  const at = (j: JobView) => (expected.has(j.id) ? Date.parse(expected.get(j.id)!.start) : Number.POSITIVE_INFINITY);
  const rows = jobs
    .filter((j) => j.state === "PENDING")
    .sort((a, b) => at(a) - at(b) || a.id - b.id)
    .map((job) => ({ job, ctx: { label: jobLabel(job), now, expected: expected.get(job.id) } }));
  return renderFormat(format ?? (parseFormat("JobID,Name,User,StateCompact,StartTime,NumNodes,SchedNodes,ReasonList") as Format), rows, !noheader);
}
