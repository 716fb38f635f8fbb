import { MAX_NAME, MAX_USER } from "../api/schemas.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, intFlag, printJson, statesFlag, table, textFlag, whenFlag } from "./common.ts";
import { jobLabel, localTime } from "./jobid.ts";
import { elapsed, nodesColumn } from "./queue.ts";
import { out } from "../util/stdio.ts";
import { formatDuration } from "../util/time.ts";
import { mib, resourcesColumn } from "./resource-text.ts";

export default defineCommand({
  meta: {
    name: "history",
    description:
      "Jobs that were active in a time window, finished ones included, like sacct: by default since midnight. Finished jobs are kept for the controller's --keep-history (30 days by default).",
  },
  args: {
    since: { type: "string", alias: "S", description: "Jobs active at or after: now-2hours, 08:00, 2030-01-31[T08:00], today, midnight (default: midnight)", valueHint: "TIME" },
    until: { type: "string", alias: "E", description: "Jobs submitted at or before (default: now)", valueHint: "TIME" },
    state: { type: "string", alias: "s", description: "Only these states, comma-separated (e.g. FAILED,TIMEOUT)", valueHint: "STATES" },
    name: { type: "string", description: "Only jobs of this name", valueHint: "NAME" },
    user: { type: "string", alias: "u", description: "Only jobs this user submitted", valueHint: "USER" },
    limit: { type: "string", description: "At most this many jobs, the newest (default: all, fetched 1,000 at a time)", valueHint: "N" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("history", async () => {
      const jobs = await client(args).allJobs(
        {
          since: whenFlag(args.since ?? "midnight", "--since"),
          until: whenFlag(args.until, "--until"),
          state: statesFlag(args.state),
          name: textFlag(args.name, "--name", MAX_NAME, "job names"),
          user: textFlag(args.user, "--user", MAX_USER, "user names"),
        },
        intFlag(args.limit, "--limit"),
      );
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
        localTime(j.submitTime),
        localTime(j.startTime),
        localTime(j.endTime),
      ]);
      out(table(["JOBID", "NAME", "USER", "STATE", "EXIT", "ELAPSED", "NODES", "CPUS/MEM/GPUS", "CPUTIME", "MAXMEM", "SUBMIT", "START", "END"], rows));
    }),
});
