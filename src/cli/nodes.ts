import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table } from "./common.ts";
import { out } from "../util/stdio.ts";

export default defineCommand({
  meta: { name: "nodes", description: "List nodes with their state, size and job" },
  args: { json: { type: "boolean", description: "Print the API's JSON" }, ...controllerArgs },
  run: ({ args }) =>
    guard("nodes", async () => {
      const { nodes } = await client(args).nodes();
      if (args.json) return printJson({ nodes });
      const rows = nodes.map((n) => [n.name, n.state, String(n.cpus), `${Math.round(n.memoryMb / 1024)}G`, n.jobId === null ? "" : String(n.jobId), n.addr, n.reason ?? "", n.runAs ?? ""]);
      out(table(["NODE", "STATE", "CPUS", "MEMORY", "JOB", "ADDRESS", "REASON", "RUNS JOBS AS"], rows));
    }),
});
