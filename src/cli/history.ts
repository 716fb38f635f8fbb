import { MAX_NAME } from "../api/schemas.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, intFlag, printJson, statesFlag, table, textFlag, UsageError } from "./common.ts";
import { windowArgs, windowFlags } from "./window.ts";
import { jobLabel, localTime } from "./jobid.ts";
import { elapsed, nodesColumn } from "./queue.ts";
import { out } from "../util/stdio.ts";
import { formatFlag, headed, idsFlag, jobsOf, partitionsFlag, usersFlag } from "./listing.ts";
import { FIELD_NAMES, renderFormat } from "./job-format.ts";
import { formatDuration } from "../util/time.ts";
import { gpuTime, mib, resourcesColumn } from "./resource-text.ts";
import { selectedRows, stepSelection, withSteps } from "./step-rows.ts";
import type { ApiClient } from "../api/client.ts";
import type { JobDetail, JobView } from "../api/schemas.ts";

/** sacct's default fields, but Account (ebb keeps no accounts). */
export const SACCT_DEFAULT = "JobID,JobName,Partition,AllocCPUS,State,ExitCode";

export default defineCommand({
  meta: {
    name: "history",
    description:
      "Jobs that were active in a time window, finished ones included, like sacct: by default since midnight. Finished jobs are kept for the controller's --keep-history (30 days by default).",
  },
  args: {
    ...windowArgs({ since: "Jobs active at or after", until: "Jobs submitted at or before" }),
    state: { type: "string", alias: "s", description: "Only these states, comma-separated (e.g. FAILED,TIMEOUT)", valueHint: "STATES" },
    name: { type: "string", description: "Only jobs of this name", valueHint: "NAME" },
    user: { type: "string", alias: "u", description: "Only jobs these users submitted, comma-separated", valueHint: "USER,..." },
    me: { type: "boolean", description: "Only your own jobs (--user with your user name)" },
    partition: { type: "string", alias: ["p", "r"], description: "Only jobs in these partitions, comma-separated (sacct's -r; ebb partitions lists them)", valueHint: "NAME,..." },
    jobs: { type: "string", alias: "j", description: "Only these jobs, comma-separated (an array's id: its tasks); with --steps, ID.batch or ID.0 only that line", valueHint: "ID,..." },
    format: { type: "string", alias: "o", description: `Columns as sacct --format, JobID,User,State%12,Elapsed,ExitCode (fields: ${FIELD_NAMES.join(", ")}), or squeue's %-codes`, valueHint: "FORMAT" },
    noheader: { type: "boolean", alias: "n", description: "Leave out the header line" },
    parsable2: { type: "boolean", description: "Fields separated by |, unpadded, as sacct -P (with --format; without it, sacct's default fields)" },
    parsable: { type: "boolean", description: "As --parsable2, with a | after the last field too (sacct -p)" },
    delimiter: { type: "string", description: "With --parsable2 or --parsable: this between fields, not | (sacct --delimiter)", valueHint: "TEXT" },
    steps: { type: "boolean", description: "With --format: a line for each job's batch shell (ID.batch) and each of its steps (ID.0, ID.1...) after the job's, as sacct without -X" },
    limit: { type: "string", description: "At most this many jobs, the newest (default: all, fetched 1,000 at a time)", valueHint: "N" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("history", async () => {
      const parsable = args.parsable ? "|end" : args.parsable2 ? "|" : undefined;
      const format = args.format !== undefined ? formatFlag(args.format, "--format") : parsable ? formatFlag(SACCT_DEFAULT, "--format") : undefined;
      // sacct's 42.batch, 42.0: that step's line alone.
      const selection = args.jobs === undefined ? undefined : stepSelection(args.jobs);
      const jobs = await jobsOf(
        client(args),
        {
          ...windowFlags(args),
          state: statesFlag(args.state),
          name: textFlag(args.name, "--name", MAX_NAME, "job names"),
          id: idsFlag(selection?.ids, "--jobs"),
          partition: partitionsFlag(args.partition, "--partition"),
        },
        usersFlag(args.user, args.me, "--user"),
        intFlag(args.limit, "--limit"),
      );
      const now = Date.now();
      if (format && !args.json) {
        const api = client(args);
        const details = args.steps ? await stepsOf(api, jobs) : new Map<number, JobDetail>();
        const all = jobs.flatMap((job) => withSteps(job, details.get(job.id), jobLabel(job), now));
        const rows = args.steps && selection ? selectedRows(all, selection.steps) : all;
        return out(renderFormat(format, rows, !args.noheader, parsable, delimiterFlag(args.delimiter)));
      }
      if (args.json) return printJson({ jobs });
      const rows = jobs.map((j) => [
        jobLabel(j),
        j.name.slice(0, 16),
        j.user ?? "",
        j.state,
        j.exitCode === null ? "" : String(j.exitCode),
        elapsed(j),
        nodesColumn(j),
        resourcesColumn(j),
        j.usage ? formatDuration(j.usage.cpuSec) : "",
        j.usage ? mib(j.usage.peakMemMiB) : "",
        gpuTime(j),
        localTime(j.submitTime),
        localTime(j.startTime),
        localTime(j.endTime),
      ]);
      out(headed(table(["JOBID", "NAME", "USER", "STATE", "EXIT", "ELAPSED", "NODES", "CPUS/MEM/GPUS", "CPUTIME", "MAXMEM", "GPUTIME", "SUBMIT", "START", "END"], rows), !args.noheader));
    }),
});

/** Each started job's detail (its steps), eight requests at a time; a job gone meanwhile has none. */
async function stepsOf(api: ApiClient, jobs: readonly JobView[]): Promise<Map<number, JobDetail>> {
  const out = new Map<number, JobDetail>();
  const started = jobs.filter((j) => j.startTime !== null);
  for (let i = 0; i < started.length; i += 8)
    await Promise.all(started.slice(i, i + 8).map(async (j) => void (await api.job(j.id).then((d) => out.set(j.id, d), () => undefined))));
  return out;
}

/** sacct --delimiter: any text but a line break, at most 16 characters. */
function delimiterFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === "" || value.length > 16 || /[\r\n]/.test(value)) throw new UsageError(`--delimiter: ${JSON.stringify(value.slice(0, 20))}: one to 16 characters, no line break`);
  return value;
}
