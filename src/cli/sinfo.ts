/**
 * `sinfo` in an ebb job (beside srun on every job process's PATH): this cluster's partitions and
 * nodes as sinfo 22.05 prints them, so that a script's `sinfo -N -h -o "%N %T"` or `sinfo -h -t
 * idle` reads ebb's nodes, not those of a Slurm the host may also run. `sinfoText` (pure) does
 * sinfo's -N, -h, -o, -p, -t and -n; other flags are refused, naming ebb nodes and ebb partitions.
 * Without -N, nodes of a partition in one state with the same CPUs, memory and features share a
 * line (their %N a host list, %D a count, %C summed), as sinfo groups them.
 */
import { defineCommand } from "./command.ts";
import { client } from "./common.ts";
import { UsageError } from "./errors.ts";
import { splitFlag } from "./slurm-shim.ts";
import type { NodeView, PartitionView } from "../api/schemas.ts";
import { compressHostlist, expandHostlist } from "../util/hostlist.ts";
import { DEFAULT_PARTITION } from "../roles/slurm-env.ts";
import { err, out } from "../util/stdio.ts";

/**
 * sinfo's default formats, partitions and nodes (-N), whose `#` is the width of the column's
 * longest value or its header's, as sinfo widens them (a partition "development": 11).
 */
const PARTITIONS = "%#P %.5a %.10l %.6D %.6t %N";
const NODES = "%#N %.6D %.#P %6t";

/** A node in a partition: one line of -N, a member of a group otherwise. */
interface Entry {
  node: NodeView;
  partition: string;
  isDefault: boolean;
  maxTime: number | null;
}

/** Slurm's node state (long, compact) for ebb's: a node with some of its cores held is mixed. */
function state(n: NodeView): [string, string] {
  switch (n.state) {
    case "IDLE":
      return ["idle", "idle"];
    case "ALLOCATED":
      return n.free.cpus > 0 ? ["mixed", "mix"] : ["allocated", "alloc"];
    case "COMPLETING":
      return ["completing", "comp"];
    case "DRAINING":
      return ["draining", "drng"];
    case "DRAINED":
      return ["drained", "drain"];
    case "DOWN":
      return ["down", "down"];
    default:
      return ["unknown", "unk"];
  }
}

/** sinfo's time limit: infinite, else D-HH:MM:SS, H:MM:SS or M:SS. */
function limit(seconds: number | null): string {
  if (seconds === null) return "infinite";
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const pad = (x: number) => String(x).padStart(2, "0");
  return d > 0 ? `${d}-${pad(h)}:${pad(m)}:${pad(s)}` : h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

type Code = { header: string; value: (g: readonly Entry[]) => string };
const cpusText = (g: readonly Entry[]) => {
  const a = g.reduce((t, e) => t + e.node.allocated.cpus, 0);
  const total = g.reduce((t, e) => t + e.node.cpus, 0);
  const other = g.reduce((t, e) => t + (["IDLE", "ALLOCATED"].includes(e.node.state) ? 0 : e.node.cpus - e.node.allocated.cpus), 0);
  return `${a}/${total - a - other}/${other}/${total}`;
};
const CODES: Record<string, Code> = {
  P: { header: "PARTITION", value: (g) => `${g[0]!.partition}${g[0]!.isDefault ? "*" : ""}` },
  R: { header: "PARTITION", value: (g) => g[0]!.partition },
  a: { header: "AVAIL", value: () => "up" },
  l: { header: "TIMELIMIT", value: (g) => limit(g[0]!.maxTime) },
  D: { header: "NODES", value: (g) => String(g.length) },
  t: { header: "STATE", value: (g) => state(g[0]!.node)[1] },
  T: { header: "STATE", value: (g) => state(g[0]!.node)[0] },
  N: { header: "NODELIST", value: (g) => compressHostlist(g.map((e) => e.node.name)) },
  n: { header: "HOSTNAMES", value: (g) => g.map((e) => e.node.name).join(",") },
  c: { header: "CPUS", value: (g) => String(g[0]!.node.cpus) },
  C: { header: "CPUS(A/I/O/T)", value: cpusText },
  m: { header: "MEMORY", value: (g) => String(g[0]!.node.memoryMb) },
  e: { header: "FREE_MEM", value: (g) => String(g.reduce((t, e) => t + e.node.free.memMiB, 0)) },
  f: { header: "AVAIL_FEATURES", value: (g) => g[0]!.node.features.join(",") || "(null)" },
  G: { header: "GRES", value: (g) => (g[0]!.node.gpus.length > 0 ? `gpu:${g[0]!.node.gpus[0] ? `${g[0]!.node.gpus[0]}:` : ""}${g[0]!.node.gpus.length}` : "(null)") },
};

type Part = string | { code: Code; width?: number; right: boolean };

function parseFormat(text: string, widths: Record<string, number>): Part[] {
  const parts: Part[] = [];
  const re = /%(\.?)(#|\d*)(.)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[3] === "%") {
      parts.push("%");
      continue;
    }
    const code = CODES[m[3]!];
    if (!code) throw new UsageError(`--format=${text}: %${m[3]} is not one ebb's sinfo prints (${Object.keys(CODES).map((c) => `%${c}`).join(" ")}); ebb nodes and ebb partitions show the rest`);
    parts.push({ code, width: m[2] === "#" ? Math.max(code.header.length, widths[m[3]!] ?? 0) : m[2] ? Number(m[2]) : undefined, right: m[1] === "." });
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

const fit = (text: string, width: number | undefined, right: boolean) => (width === undefined ? text : right ? text.padStart(width).slice(0, Math.max(width, 0)) : text.padEnd(width).slice(0, width));
const line = (parts: readonly Part[], cell: (c: Code) => string) => parts.map((p) => (typeof p === "string" ? p : fit(cell(p.code), p.width, p.right))).join("");

/** What `sinfo ARGV` prints, from the controller's nodes and partitions. */
export function sinfoText(argv: readonly string[], nodes: readonly NodeView[], partitions: readonly PartitionView[]): string {
  let perNode = false;
  let header = true;
  let format: string | undefined;
  let only: Set<string> | undefined;
  let states: string[] | undefined;
  let names: Set<string> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === "-N" || w === "--Node") perNode = true;
    else if (w === "-h" || w === "--noheader") header = false;
    else if (/^-[Nh]{2}$/.test(w)) {
      perNode = true;
      header = false;
    } else {
      const { flag, inline } = splitFlag(w);
      const known = ["-o", "--format", "-p", "--partition", "-t", "--states", "-n", "--nodes"];
      if (!known.includes(flag)) throw new UsageError(`${w}: ebb's sinfo takes -N, -h, -o, -p, -t and -n; ebb nodes and ebb partitions show this cluster in full`);
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      if (flag === "-o" || flag === "--format") format = value;
      else if (flag === "-p" || flag === "--partition") only = new Set(value.split(","));
      else if (flag === "-t" || flag === "--states") states = value.toLowerCase().split(",");
      else {
        const list = expandHostlist(value);
        if ("error" in list) throw new UsageError(`--nodes=${value}: ${list.error}`);
        names = new Set(list);
      }
    }
  }
  // A controller without partitions has one of every node, as SLURM_JOB_PARTITION names it.
  const pools: readonly Pick<PartitionView, "name" | "default" | "nodes" | "maxTime">[] = partitions.length > 0 ? partitions : [{ name: DEFAULT_PARTITION, default: true, nodes: nodes.map((n) => n.name), maxTime: null }];
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const entries: Entry[] = [];
  for (const p of pools) {
    if (only && !only.has(p.name)) continue;
    for (const name of p.nodes) {
      const node = byName.get(name);
      if (!node || (names && !names.has(name))) continue;
      if (states && !state(node).some((s) => states!.includes(s))) continue;
      entries.push({ node, partition: p.name, isDefault: p.default, maxTime: p.maxTime });
    }
  }
  const longest = (xs: readonly string[]) => Math.max(0, ...xs.map((x) => x.length));
  const parts = parseFormat(format ?? (perNode ? NODES : PARTITIONS), { P: longest(entries.map((e) => CODES.P!.value([e]))), N: longest(entries.map((e) => e.node.name)) });
  let groups: Entry[][];
  if (perNode) groups = entries.map((e) => [e]).sort((a, b) => a[0]!.node.name.localeCompare(b[0]!.node.name, undefined, { numeric: true }));
  else {
    const by = new Map<string, Entry[]>();
    for (const e of entries) {
      const key = JSON.stringify([e.partition, state(e.node)[0], e.node.cpus, e.node.memoryMb, e.node.features, e.node.gpus]);
      by.set(key, [...(by.get(key) ?? []), e]);
    }
    groups = [...by.values()];
  }
  const lines = groups.map((g) => line(parts, (c) => c.value(g)));
  return [...(header ? [line(parts, (c) => c.header)] : []), ...lines].map((l) => `${l}\n`).join("");
}

export default defineCommand({
  meta: { name: "sinfo", description: "sinfo inside an ebb job (on every job process's PATH): this cluster's partitions and nodes, with sinfo's -N, -h, -o, -p, -t and -n.", hidden: true },
  args: { words: { type: "positional", variadic: true, description: "sinfo's flags" } },
  stopAtPositional: true,
  ownParser: true,
  ownShortHelp: true,
  run: async ({ raw }) => {
    try {
      const api = client({});
      const [{ nodes }, { partitions }] = await Promise.all([api.nodes(), api.partitions()]).catch((e: Error) => {
        throw new UsageError(`the controller's nodes: ${e.message}`);
      });
      out(sinfoText(raw, nodes, partitions));
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      err(`sinfo: error: ${e.message}\n`);
      process.exit(1);
    }
  },
});
