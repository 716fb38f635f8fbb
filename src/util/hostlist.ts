/**
 * Slurm-style compressed host lists for display: node01,node02,node03,node07 -> node[01-03,07].
 * Names that share a prefix and a zero-padded width are folded together.
 */
export function compressHostlist(names: readonly string[]): string {
  const groups = new Map<string, { width: number; nums: number[] }>();
  const plain: string[] = [];
  const order: string[] = [];
  for (const name of names) {
    const m = /^(.*?)(\d+)$/.exec(name);
    if (!m) {
      plain.push(name);
      continue;
    }
    const key = `${m[1]}\u0000${m[2]!.length}`;
    let g = groups.get(key);
    if (!g) {
      g = { width: m[2]!.length, nums: [] };
      groups.set(key, g);
      order.push(key);
    }
    g.nums.push(Number(m[2]));
  }
  const out: string[] = [];
  for (const key of order) {
    const g = groups.get(key)!;
    const prefix = key.split("\u0000")[0]!;
    const nums = [...new Set(g.nums)].sort((a, b) => a - b);
    const pad = (n: number) => String(n).padStart(g.width, "0");
    if (nums.length === 1) {
      out.push(prefix + pad(nums[0]!));
      continue;
    }
    const ranges: string[] = [];
    let start = nums[0]!;
    let prev = start;
    for (const n of [...nums.slice(1), Number.NaN]) {
      if (n === prev + 1) {
        prev = n;
        continue;
      }
      ranges.push(start === prev ? pad(start) : `${pad(start)}-${pad(prev)}`);
      start = prev = n;
    }
    out.push(`${prefix}[${ranges.join(",")}]`);
  }
  return [...out, ...plain].join(",");
}
