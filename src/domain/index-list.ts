/**
 * Lists of small non-negative integers (CPU ids, core and GPU indices) in the kernel's and Slurm's
 * range syntax: "0-3,8,10-11". What /proc/self/status Cpus_allowed_list and cgroup cpuset.cpus
 * hold, and how a job's cores are shown.
 */

/** Parses "0-3,8" into [0, 1, 2, 3, 8] (ascending, without repeats); an error names the bad part. Empty text is an empty list. */
export function parseIndexList(text: string, max = 1 << 16): number[] | { error: string } {
  const out = new Set<number>();
  for (const part of text.trim().split(",")) {
    if (part === "" && text.trim() === "") break;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    const lo = Number(m?.[1]);
    const hi = m?.[2] === undefined ? lo : Number(m[2]);
    if (!m || hi < lo || hi >= max) return { error: `"${part}" is not an index or a range of indices (e.g. 0-3,8) below ${max}` };
    for (let i = lo; i <= hi; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

/** [0, 1, 2, 3, 8] as "0-3,8" (any order, repeats ignored). */
export function formatIndexList(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j === i ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}
