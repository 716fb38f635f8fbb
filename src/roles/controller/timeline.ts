/** The allocation timeline (GET /v1/timeline): which job held which node when, over a window. */
import type { TimelineView } from "../../api/schemas.ts";
import { expandIndices, type AllocationRow, type JobListRow } from "../../store/jobs.ts";
import type { JobRuntime } from "./state.ts";
import { byNodeName, nodeView, pendingReason, type ViewContext } from "./views.ts";

const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());

/** Jobs beyond this many in a window are left out, the oldest first (the drawing stays quick). */
export const MAX_JOBS = 5000;

export type TimelineJob = TimelineView["jobs"][number];
export type TimelinePending = TimelineView["pending"][number];
export type TimelineNode = TimelineView["nodes"][number];

/** The allocation rows of these jobs, by job. */
export function allocationsByJob(ctx: ViewContext, ids: number[]): Map<number, AllocationRow[]> {
  const allocs = new Map<number, AllocationRow[]>();
  if (ids.length > 0)
    for (const a of ctx.store.allocationsOf(ids)) {
      const list = allocs.get(a.jobId) ?? [];
      list.push(a);
      allocs.set(a.jobId, list);
    }
  return allocs;
}

/** A pending job as the timeline lists it: why it waits. */
export function pendingEntry(row: JobListRow, live: JobRuntime | undefined): TimelinePending {
  const blocked = live?.blocked;
  return {
    id: row.id,
    name: row.name,
    nodes: row.nodes,
    submitTime: iso(row.submitTime)!,
    reason: blocked ? blocked.reason : pendingReason(live?.waitReason),
    reasonDetail: blocked ? blocked.detail : (live?.waitReason ?? null),
  };
}

/** A job that held nodes: each node's stretch (those ended before `since` left out), its adaptations. */
export function timelineJob(ctx: ViewContext, row: JobListRow, live: JobRuntime | undefined, allocs: readonly AllocationRow[], since = 0): TimelineJob {
  return {
    id: row.id,
    name: row.name,
    state: row.state as TimelineJob["state"],
    elastic: row.elastic,
    user: row.user,
    startTime: iso(row.startTime),
    endTime: iso(row.endTime),
    nodes: live ? live.nodes.length : row.nodes,
    allocations: allocs
      .filter((a) => a.until === null || a.until >= since)
      .map((a) => ({ node: a.node, since: iso(a.since)!, until: iso(a.until), cpus: a.cores === null ? null : expandIndices(a.cores).length })),
    adaptations: row.elastic
      ? ctx.elastic.adaptations(row.id).map((a) => ({ id: a.id, state: a.state, fromNodes: a.fromNodes, toNodes: a.toNodes, requestedAt: iso(a.requestedAt)!, endedAt: iso(a.endedAt) }))
      : [],
  };
}

export function timelineNodes(ctx: ViewContext, now: number): TimelineNode[] {
  return [...ctx.state.nodes.values()]
    .map((n) => ({ ...nodeView(n, now), heartbeatAge: n.session ? Math.max(0, now - n.lastSeen) / 1000 : null }))
    .sort((a, b) => byNodeName(a.name, b.name));
}

export function timeline(ctx: ViewContext, windowMs: number, now = Date.now()): TimelineView {
  const since = now - windowMs;
  const rows = ctx.store.listJobs({ since, limit: MAX_JOBS });
  const allocs = allocationsByJob(ctx, rows.filter((r) => r.startTime !== null).map((r) => r.id));
  const jobs: TimelineJob[] = [];
  const pending: TimelinePending[] = [];
  for (const r of rows) {
    const live = ctx.state.jobs.get(r.id);
    const row = live?.row ?? r;
    if (row.state === "PENDING") {
      pending.push(pendingEntry(row, live));
      continue;
    }
    const list = allocs.get(r.id)?.filter((a) => a.until === null || a.until >= since);
    if (!list?.length) continue;
    jobs.push(timelineJob(ctx, row, live, list));
  }
  return { now: iso(now)!, since: iso(since)!, nodes: timelineNodes(ctx, now), jobs, pending };
}

/** A cheap mark of the cluster's state: it changes when the timeline may have (the live stream computes a delta then). */
export function timelineMark(ctx: ViewContext, commits: number, now = Date.now()): string {
  let s = String(commits);
  for (const n of ctx.state.nodes.values()) s += `|${nodeView(n, now).state}`;
  for (const j of ctx.state.jobs.values()) if (j.row.state === "PENDING") s += `|${j.row.id}:${j.waitReason ?? ""}:${j.blocked?.reason ?? ""}`;
  return s;
}
