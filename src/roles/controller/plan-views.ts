/** The API's views of committed scheduling plans (GET /v1/plans, and a job's items in GET /v1/jobs/{id}). */
import type { JobPlanItem, PlanItemView, PlanView } from "../../api/schemas.ts";
import type { PlanItemRow, PlanRow } from "../../store/plans.ts";

const iso = (t: number) => new Date(t).toISOString();
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const int = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);

export function planItemView(row: PlanItemRow): PlanItemView {
  const d = row.detail;
  const limit = (d.limit ?? null) as { ratio?: unknown; source?: unknown } | null;
  return {
    id: row.id,
    jobId: row.jobId,
    kind: row.kind,
    status: row.status,
    reason: row.reason,
    outcome: row.outcome,
    nodes: strings(d.nodes),
    tasks: int(d.tasks),
    from: int(d.from),
    to: int(d.to),
    rule: typeof d.rule === "string" ? d.rule : null,
    added: strings(d.added),
    removed: strings(d.removed),
    limitRatio: typeof limit?.ratio === "number" ? limit.ratio : null,
    limitSource: typeof limit?.source === "string" ? limit.source : null,
  };
}

export function jobPlanItem(r: { item: PlanItemRow; time: number; policy: string }): JobPlanItem {
  return { ...planItemView(r.item), planId: r.item.planId, time: iso(r.time), policy: r.policy };
}

/** A plan with the items given (the caller's), and the reservations of the jobs `mayRead` allows. */
export function planView(plan: PlanRow, items: readonly PlanItemRow[], mayRead: (jobId: number) => boolean): PlanView {
  const reservations = (plan.reservations as { jobId: number; start: number; nodes: number; reason?: string }[])
    .filter((r) => mayRead(r.jobId))
    .map((r) => ({ jobId: r.jobId, start: iso(r.start), nodes: r.nodes, reason: r.reason ?? null }));
  return { id: plan.id, time: iso(plan.time), policy: plan.policy, reservations, items: items.map(planItemView) };
}
