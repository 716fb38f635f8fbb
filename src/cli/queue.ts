import { defineCommand } from "citty";
import type { JobView } from "../api/schemas.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { formatDuration } from "../util/time.ts";
import { client, controllerArgs, guard, intFlag, printJson, table } from "./common.ts";
import { out } from "../util/stdio.ts";

export function elapsed(j: JobView, now = Date.now()): string {
  if (!j.startTime) return "0:00";
  const end = j.endTime ? Date.parse(j.endTime) : now;
  return formatDuration((end - Date.parse(j.startTime)) / 1000);
}

export default defineCommand({
  meta: { name: "queue", description: "List pending and running jobs (--all: finished ones too)" },
  args: {
    all: { type: "boolean", description: "Include finished jobs" },
    state: { type: "string", description: "Only these states, comma-separated (e.g. PENDING,RUNNING)", valueHint: "STATES" },
    limit: { type: "string", description: "At most this many jobs, the newest (default 1000)", valueHint: "N" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("queue", async () => {
      const state = args.state ?? (args.all ? undefined : "PENDING,RUNNING,ADAPTING");
      const { jobs } = await client(args).jobs({ state, limit: intFlag(args.limit, "--limit") });
      if (args.json) return printJson({ jobs });
      const rows = jobs.map((j) => [
        String(j.id),
        j.name.slice(0, 16),
        j.state,
        elapsed(j),
        formatDuration(j.timeLimit),
        j.minNodes === j.maxNodes ? String(j.nodes) : `${j.allocation.length || j.nodes} [${j.minNodes}-${j.maxNodes}]`,
        j.state === "PENDING" ? `(${j.reason ?? "queued"})` : j.allocation.length > 0 ? compressHostlist(j.allocation) : j.reason ? `(${j.reason})` : "",
      ]);
      out(table(["JOBID", "NAME", "STATE", "TIME", "LIMIT", "NODES", "NODELIST(REASON)"], rows));
    }),
});
