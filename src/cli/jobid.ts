/** How a job is named to people: its id, or ARRAY_TASK for an array task (as squeue shows them). */
import type { JobView } from "../api/schemas.ts";

export function jobLabel(j: Pick<JobView, "id" | "arrayJobId" | "arrayTaskId">): string {
  return j.arrayJobId !== null ? `${j.arrayJobId}_${j.arrayTaskId}` : String(j.id);
}

/** Local time without a zone, as sacct prints it: 2026-01-31T08:00:05. */
export function localTime(iso: string | null): string {
  if (iso === null) return "Unknown";
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
