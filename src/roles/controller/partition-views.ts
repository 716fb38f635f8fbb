/** GET /v1/partitions: each partition's nodes and their states, its bounds and its jobs (sinfo's summary). */
import type { PartitionView } from "../../api/schemas.ts";
import { inPartition, type Partition } from "../../sched/partitions.ts";
import type { ClusterState } from "./state.ts";
import { byNodeName } from "./views.ts";

export function partitionViews(list: readonly Partition[], state: ClusterState, now = Date.now()): PartitionView[] {
  return list.map((p) => {
    const nodes: string[] = [];
    const nodeStates = { allocated: 0, idle: 0, other: 0, total: 0 };
    const cpus = { allocated: 0, idle: 0, other: 0, total: 0 };
    for (const n of state.nodes.values()) {
      if (!inPartition(p, n.row.name)) continue;
      nodes.push(n.row.name);
      const held = n.row.cpus - state.freeCores(n);
      nodeStates.total++;
      cpus.total += n.row.cpus;
      cpus.allocated += held;
      if (!state.isSchedulable(n, now) && state.isIdle(n)) {
        nodeStates.other++;
        cpus.other += n.row.cpus;
        continue;
      }
      if (state.isIdle(n)) nodeStates.idle++;
      else nodeStates.allocated++;
      if (state.isSchedulable(n, now)) cpus.idle += n.row.cpus - held;
      else cpus.other += n.row.cpus - held;
    }
    const jobs = { running: 0, pending: 0 };
    for (const j of state.jobs.values()) {
      if (j.row.partition !== p.name) continue;
      if (j.row.state === "PENDING") jobs.pending++;
      else jobs.running++;
    }
    return {
      name: p.name,
      default: p.isDefault,
      nodeList: p.nodesText,
      nodes: nodes.sort(byNodeName),
      nodeStates,
      cpus,
      defaultTime: p.defaultTime ?? null,
      maxTime: p.maxTime ?? null,
      maxNodes: p.maxNodes ?? null,
      allowUsers: p.allowUsers ?? null,
      allowGroups: p.allowGroups ?? null,
      tier: p.tier,
      limits: { ...p.limits },
      jobs,
    };
  });
}
