/** `ebb partitions`: the partitions and their nodes (like sinfo's summary). */
import type { PartitionView } from "../api/schemas.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { out } from "../util/stdio.ts";
import { formatDuration } from "../util/time.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table } from "./common.ts";

const limitsText = (l: PartitionView["limits"]) =>
  [l.maxJobs !== undefined && `jobs ${l.maxJobs}`, l.maxSubmitJobs !== undefined && `submitted ${l.maxSubmitJobs}`, l.maxCpus !== undefined && `cpus ${l.maxCpus}`, l.maxGpus !== undefined && `gpus ${l.maxGpus}`, l.maxNodes !== undefined && `nodes ${l.maxNodes}`].filter(Boolean).join(",");

export function partitionsTable(partitions: readonly PartitionView[]): string {
  if (partitions.length === 0) return "no partitions: every job may run on every node (an admin defines them: partitions in the controller's config file)\n";
  const rows = partitions.map((p) => {
    const n = p.nodeStates;
    const c = p.cpus;
    const who = [p.allowUsers && `users ${p.allowUsers.join(",")}`, p.allowGroups && `groups ${p.allowGroups.join(",")}`].filter(Boolean).join("; ") || "all";
    return [
      p.default ? `${p.name}*` : p.name,
      p.maxTime === null ? "infinite" : formatDuration(p.maxTime),
      p.defaultTime === null ? "-" : formatDuration(p.defaultTime),
      p.maxNodes === null ? "-" : String(p.maxNodes),
      `${n.allocated}/${n.idle}/${n.other}/${n.total}`,
      `${c.allocated}/${c.idle}/${c.other}/${c.total}`,
      String(p.tier),
      `${p.jobs.running}/${p.jobs.pending}`,
      who,
      limitsText(p.limits) || "-",
      p.nodes.length > 0 ? compressHostlist(p.nodes) : p.nodeList === "ALL" ? "(all nodes)" : `(none up of ${p.nodeList})`,
    ];
  });
  return table(["PARTITION", "TIMELIMIT", "DEFAULTTIME", "MAXNODES", "NODES(A/I/O/T)", "CPUS(A/I/O/T)", "TIER", "JOBS(R/PD)", "ALLOWED", "USER LIMITS", "NODELIST"], rows);
}

export default defineCommand({
  meta: {
    name: "partitions",
    description:
      "List the partitions (like sinfo): * marks the default; nodes and cores allocated/idle/other/total; time limits, most nodes per job, priority tier, jobs running/pending, who may use it and each user's limits in it",
  },
  args: { json: { type: "boolean", description: "Print the API's JSON" }, ...controllerArgs },
  run: ({ args }) =>
    guard("partitions", async () => {
      const { partitions } = await client(args).partitions();
      if (args.json) return printJson({ partitions });
      out(partitionsTable(partitions));
    }),
});
