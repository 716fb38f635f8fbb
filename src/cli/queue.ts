import { compressIndices } from "../domain/array.ts";
import type { JobView } from "../api/schemas.ts";
import { FINAL_STATES } from "../domain/job.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { formatDuration } from "../util/time.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, intFlag, printJson, statesFlag, table } from "./common.ts";
import { jobLabel } from "./jobid.ts";
import { out } from "../util/stdio.ts";
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
export function queueRows(jobs: readonly JobView[]): { label: string; job: JobView }[] {
  const rows: { label: string; job: JobView; tasks?: number[] }[] = [];
  const groups = new Map<string, { label: string; job: JobView; tasks?: number[] }>();
  for (const j of jobs) {
    if (j.state === "PENDING" && j.arrayJobId !== null) {
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
  meta: { name: "queue", description: "List pending and running jobs (--all: finished ones too); an array's pending tasks share a line, 12_[3-10]" },
  args: {
    all: { type: "boolean", description: "Include finished jobs (with their exit codes)" },
    state: { type: "string", description: "Only these states, comma-separated (e.g. PENDING,RUNNING)", valueHint: "STATES" },
    limit: { type: "string", description: "At most this many jobs, the newest (default: all, fetched 1,000 at a time)", valueHint: "N" },
    json: { type: "boolean", description: "Print the API's JSON (one entry per array task)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("queue", async () => {
      const state = statesFlag(args.state) ?? (args.all ? undefined : "PENDING,RUNNING,ADAPTING");
      const jobs = await client(args).allJobs({ state }, intFlag(args.limit, "--limit"));
      if (args.json) return printJson({ jobs });
      const showExit = state === undefined || FINAL_STATES.some((s) => state.toUpperCase().includes(s));
      const rows = queueRows(jobs).map(({ label, job: j }) => [
        label,
        j.name.slice(0, 16),
        j.state,
        elapsed(j),
        formatDuration(j.timeLimit),
        nodesColumn(j),
        resourcesColumn(j),
        ...(showExit ? [j.exitCode === null ? "" : String(j.exitCode)] : []),
        j.state === "PENDING" ? `(${j.reason ?? "None"})` : j.allocation.length > 0 ? compressHostlist(j.allocation) : j.reason ? `(${j.reason})` : "",
      ]);
      out(table(["JOBID", "NAME", "STATE", "TIME", "LIMIT", "NODES", "CPUS/MEM/GPUS", ...(showExit ? ["EXIT"] : []), "NODELIST(REASON)"], rows));
    }),
});
