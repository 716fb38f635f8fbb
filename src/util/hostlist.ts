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

/** The inverse: node[01-03,07],login -> node01,node02,node03,node07,login; an error text if malformed. */
export function expandHostlist(text: string): string[] | { error: string } {
  const out: string[] = [];
  // Split on commas outside brackets.
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of text) {
    if (ch === "[") depth++;
    if (ch === "]") depth--;
    if (depth < 0 || depth > 1) return { error: `"${text}" has unbalanced brackets` };
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (depth !== 0) return { error: `"${text}" has unbalanced brackets` };
  parts.push(cur);
  for (const part of parts.map((p) => p.trim()).filter(Boolean)) {
    const m = /^([^[\]]*)\[([^\]]+)\]([^[\]]*)$/.exec(part);
    if (!m) {
      if (/[[\]]/.test(part)) return { error: `"${part}" is not a host list such as node[01-04]` };
      out.push(part);
      continue;
    }
    for (const r of m[2]!.split(",")) {
      const rm = /^(\d+)(?:-(\d+))?$/.exec(r.trim());
      if (!rm) return { error: `"${r}" in "${part}" is not a number or a range such as 01-04` };
      const width = rm[1]!.length;
      const lo = Number(rm[1]);
      const hi = rm[2] === undefined ? lo : Number(rm[2]);
      if (hi < lo || hi - lo > 100_000) return { error: `"${r}" in "${part}" is not a range from low to high` };
      for (let n = lo; n <= hi; n++) out.push(`${m[1]}${String(n).padStart(width, "0")}${m[3]}`);
    }
  }
  return out;
}
