/**
 * The jobs a plan's items name, by id: a pass resizes a few of many running jobs, so it looks up
 * only those instead of building a map of them all (every pass of a large machine did).
 */
export function jobsById<J extends { id: number }>(jobs: readonly J[], ids: Iterable<number>): Map<number, J> {
  const out = new Map<number, J>();
  const want = new Set(ids);
  if (want.size === 0) return out;
  for (const j of jobs) {
    if (!want.has(j.id)) continue;
    out.set(j.id, j);
    // Running jobs' ids are unique: once all are found, none is left to find.
    if (out.size === want.size) break;
  }
  return out;
}
