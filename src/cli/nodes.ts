import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table } from "./common.ts";
import { out } from "../util/stdio.ts";
import { nodeColumns } from "./resource-text.ts";

/** A node's jobs, the first few of them. */
const jobsColumn = (jobs: readonly number[], completing: number | null) =>
  jobs.length === 0 ? (completing === null ? "" : String(completing)) : jobs.length <= 4 ? jobs.join(",") : `${jobs.slice(0, 3).join(",")},+${jobs.length - 3}`;

/** The rule that set a node's host state and its inputs now: "cpu.other >= 0.6 for 10 s; cpu.other=0.71 users=0". */
const hostColumn = (h: { rule: string; inputs: Record<string, number> }) =>
  [h.rule, Object.entries(h.inputs).map(([k, v]) => `${k}=${v}`).join(" ")].filter(Boolean).join("; ");

export default defineCommand({
  meta: { name: "nodes", description: "List nodes: state, host state (its agent's rules: free, busy, overloaded, owner), cores, memory and GPUs (allocated/free/total), features, jobs" },
  args: { json: { type: "boolean", description: "Print the API's JSON" }, ...controllerArgs },
  run: ({ args }) =>
    guard("nodes", async () => {
      const { nodes } = await client(args).nodes();
      if (args.json) return printJson({ nodes });
      const features = nodes.some((n) => n.features.length > 0);
      const rules = nodes.some((n) => n.host.rule !== "" || Object.keys(n.host.inputs).length > 0);
      const rows = nodes.map((n) => {
        const c = nodeColumns(n);
        return [n.name, n.state, n.host.state, c.cpus, c.memory, c.gpus, ...(features ? [n.features.join(",")] : []), jobsColumn(n.jobs, n.jobId), n.addr, n.reason ?? "", n.runAs ?? "", ...(rules ? [hostColumn(n.host)] : [])];
      });
      out(table(["NODE", "STATE", "HOST", "CPUS(A/F/T)", "MEMORY(A/F/T)", "GPUS(A/F/T)", ...(features ? ["FEATURES"] : []), "JOBS", "ADDRESS", "REASON", "RUNS JOBS AS", ...(rules ? ["HOST RULE; INPUTS"] : [])], rows));
    }),
});
