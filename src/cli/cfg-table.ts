/** `ebb show`'s CFG section: the job's communication loops as a table (nesting by indentation). */
import type { JobDetail } from "../api/schemas.ts";
import { table } from "../util/table.ts";

type Cfg = NonNullable<JobDetail["cfg"]>;

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toPrecision(3));

export function cfgSection(cfg: JobDetail["cfg"]): string {
  if (cfg === null) return "";
  if (!cfg.monitored) return `\nCommunication loops: not monitored (${cfg.reason ?? "no reason given"})\n`;
  if (cfg.loops.length === 0) return "\nCommunication loops: none detected\n";
  const byParent = new Map<string | null, Cfg["loops"]>();
  const keys = new Set(cfg.loops.map((l) => l.key));
  for (const l of cfg.loops) {
    const p = l.parent !== null && keys.has(l.parent) ? l.parent : null;
    (byParent.get(p) ?? byParent.set(p, []).get(p)!).push(l);
  }
  const rows: string[][] = [];
  const seen = new Set<string>();
  const walk = (parent: string | null, depth: number) => {
    for (const l of byParent.get(parent) ?? []) {
      if (seen.has(l.key)) continue;
      seen.add(l.key);
      const name = `${"  ".repeat(depth)}L${rows.length + 1}${l.key === cfg.current ? "*" : ""}`;
      rows.push([
        name,
        l.ranks,
        l.distributed ? "yes" : "no",
        String(l.visits),
        ms(l.iterMs),
        ms(l.mpiMs),
        l.mtct === null ? "-" : l.mtct.toFixed(3),
        l.key.length > 60 ? `${l.key.slice(0, 57)}...` : l.key,
      ]);
      walk(l.key, depth + 1);
    }
  };
  walk(null, 0);
  const text = table(["LOOP", "RANKS", "DISTRIBUTED", "ITERATIONS", "ITER_MS", "MPI_MS", "MTCT", "CALLS"], rows);
  return `\nCommunication loops (${cfg.ntasks} ranks; * = current distributed loop; MTCT = MPI / compute time, newest window):\n${text
    .split("\n")
    .map((x) => (x ? `  ${x}` : x))
    .join("\n")}`;
}
