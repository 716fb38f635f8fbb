import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table } from "./common.ts";
import { out } from "../util/stdio.ts";
import { nodeColumns } from "./resource-text.ts";

/** A node's jobs, the first few of them. */
const jobsColumn = (jobs: readonly number[], completing: number | null) =>
  jobs.length === 0 ? (completing === null ? "" : String(completing)) : jobs.length <= 4 ? jobs.join(",") : `${jobs.slice(0, 3).join(",")},+${jobs.length - 3}`;

export default defineCommand({
  meta: { name: "nodes", description: "List nodes: state, cores, memory and GPUs (allocated/free/total), features, jobs" },
  args: { json: { type: "boolean", description: "Print the API's JSON" }, ...controllerArgs },
  run: ({ args }) =>
    guard("nodes", async () => {
      const { nodes } = await client(args).nodes();
      if (args.json) return printJson({ nodes });
      const features = nodes.some((n) => n.features.length > 0);
      const rows = nodes.map((n) => {
        const c = nodeColumns(n);
        return [n.name, n.state, c.cpus, c.memory, c.gpus, ...(features ? [n.features.join(",")] : []), jobsColumn(n.jobs, n.jobId), n.addr, n.reason ?? "", n.runAs ?? ""];
      });
      out(table(["NODE", "STATE", "CPUS(A/F/T)", "MEMORY(A/F/T)", "GPUS(A/F/T)", ...(features ? ["FEATURES"] : []), "JOBS", "ADDRESS", "REASON", "RUNS JOBS AS"], rows));
    }),
});
