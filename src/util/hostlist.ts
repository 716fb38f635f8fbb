/**
 * Slurm-style compressed host lists for display: node01,node02,node03,node07 -> node[01-03,07].
 * Names that share a prefix and a zero-padded width are folded together.
 */
export function compressHostlist(names: readonly string[]): string {
  // Most lists (a one-node job's start event) are one name: itself, as read.
  if (names.length === 1) return names[0]!;
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

/** At most this many names from one host list (a typo such as node[1-9999999] is refused). */
const MAX_HOSTS = 100_000;

/**
 * The inverse, in Slurm's full syntax: comma-separated names, each with any number of bracket
 * groups of numbers and ranges, expanded left to right (`rack[1-2]-n[01-02]` -> rack1-n01,
 * rack1-n02, rack2-n01, rack2-n02). A range keeps the zero-padding of its low bound (`[08-10]` ->
 * 08,09,10; `[8-10]` -> 8,9,10). Repeated names are kept once, in first-seen order. An error text
 * if malformed.
 */
export function expandHostlist(text: string): string[] | { error: string } {
  // Split on commas outside brackets.
  const parts: string[] = [];
  let inside = false;
  let cur = "";
  for (const ch of text) {
    if (ch === "[") {
      if (inside) return { error: `"${text}" has a bracket inside a bracket` };
      inside = true;
    } else if (ch === "]") {
      if (!inside) return { error: `"${text}" has unbalanced brackets` };
      inside = false;
    }
    if (ch === "," && !inside) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (inside) return { error: `"${text}" has unbalanced brackets` };
  parts.push(cur);
  const out = new Set<string>();
  for (const part of parts.map((p) => p.trim()).filter(Boolean)) {
    if (/\s/.test(part)) return { error: `"${part}" has a space in it` };
    // Literal text and bracket groups, alternately: "rack", "1-2", "-n", "01-02", "".
    const pieces = part.split(/\[([^\]]*)\]/);
    let names = [pieces[0]!];
    for (let i = 1; i < pieces.length; i += 2) {
      const values: string[] = [];
      if (pieces[i]!.trim() === "") return { error: `"${part}" has an empty bracket` };
      for (const r of pieces[i]!.split(",")) {
        const rm = /^(\d+)(?:-(\d+))?$/.exec(r.trim());
        if (!rm) return { error: `"${r}" in "${part}" is not a number or a range such as 01-04` };
        const width = rm[1]!.length;
        const lo = Number(rm[1]);
        const hi = rm[2] === undefined ? lo : Number(rm[2]);
        if (hi < lo) return { error: `"${r}" in "${part}" is not a range from low to high` };
        if (hi - lo >= MAX_HOSTS) return { error: `"${r}" in "${part}" has more than ${MAX_HOSTS} numbers` };
        for (let n = lo; n <= hi; n++) values.push(String(n).padStart(width, "0"));
      }
      if (names.length * values.length > MAX_HOSTS) return { error: `"${part}" names more than ${MAX_HOSTS} hosts` };
      names = names.flatMap((prefix) => values.map((v) => prefix + v + pieces[i + 1]!));
    }
    for (const n of names) out.add(n);
    if (out.size > MAX_HOSTS) return { error: `"${text}" names more than ${MAX_HOSTS} hosts` };
  }
  return [...out];
}
