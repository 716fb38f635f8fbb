/** The allocation timeline (GET /v1/timeline): which job held which node when, over a window. */
import type { TimelineView } from "../../api/schemas.ts";
import type { AllocationRow } from "../../store/jobs.ts";
import { jobView, nodeView, type ViewContext } from "./views.ts";

const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());

/** Jobs beyond this many in a window are left out, the oldest first (the drawing stays quick). */
const MAX_JOBS = 5000;

export function timeline(ctx: ViewContext, windowMs: number, now = Date.now()): TimelineView {
  const since = now - windowMs;
  const rows = ctx.store.listJobs({ since, limit: MAX_JOBS });
  const started = rows.filter((r) => r.startTime !== null);
  const allocs = new Map<number, AllocationRow[]>();
  if (started.length > 0)
    for (const a of ctx.store.allocationsOf(started.map((r) => r.id))) {
      if (a.until !== null && a.until < since) continue;
      const list = allocs.get(a.jobId) ?? [];
      list.push(a);
      allocs.set(a.jobId, list);
    }
  const jobs: TimelineView["jobs"] = [];
  const pending: TimelineView["pending"] = [];
  for (const r of rows) {
    const live = ctx.state.jobs.get(r.id);
    const row = live?.row ?? r;
    if (row.state === "PENDING") {
      const v = jobView(row, [], live);
      pending.push({ id: row.id, name: row.name, nodes: row.nodes, submitTime: v.submitTime, reason: v.reason, reasonDetail: v.reasonDetail });
      continue;
    }
    const list = allocs.get(r.id);
    if (!list) continue;
    jobs.push({
      id: row.id,
      name: row.name,
      state: row.state as TimelineView["jobs"][number]["state"],
      elastic: row.elastic,
      user: row.user,
      startTime: iso(row.startTime),
      endTime: iso(row.endTime),
      nodes: live ? live.nodes.length : row.nodes,
      allocations: list.map((a) => ({ node: a.node, since: iso(a.since)!, until: iso(a.until) })),
      adaptations: row.elastic
        ? ctx.elastic.adaptations(row.id).map((a) => ({ id: a.id, state: a.state, fromNodes: a.fromNodes, toNodes: a.toNodes, requestedAt: iso(a.requestedAt)!, endedAt: iso(a.endedAt) }))
        : [],
    });
  }
  const nodes = [...ctx.state.nodes.values()]
    .map((n) => ({ ...nodeView(n, now), heartbeatAge: n.session ? Math.max(0, now - n.lastSeen) / 1000 : null }))
    .sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  return { now: iso(now)!, since: iso(since)!, nodes, jobs, pending };
}

/** A cheap mark of the cluster's state: it changes when the timeline may have (the live stream sends then). */
export function timelineMark(ctx: ViewContext, commits: number, now = Date.now()): string {
  let s = String(commits);
  for (const n of ctx.state.nodes.values()) s += `|${nodeView(n, now).state}`;
  for (const j of ctx.state.jobs.values()) if (j.row.state === "PENDING") s += `|${j.row.id}:${j.waitReason ?? ""}:${j.blocked?.reason ?? ""}`;
  return s;
}
