/** `ebb show`'s CFG section: the job's communication loops as a table (nesting by indentation). */
import type { JobDetail } from "../api/schemas.ts";
import { forestParents } from "../cfg/nest.ts";
import { table } from "../util/table.ts";

type Cfg = NonNullable<JobDetail["cfg"]>;

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toPrecision(3));

export function cfgSection(cfg: JobDetail["cfg"]): string {
  if (cfg === null) return "";
  if (!cfg.monitored) return `\nCommunication loops: not monitored (${cfg.reason ?? "no reason given"})\n`;
  if (cfg.loops.length === 0) return "\nCommunication loops: none detected\n";
  const byParent = new Map<string | null, Cfg["loops"]>();
  const parent = forestParents(cfg.loops);
  for (const l of cfg.loops) {
    const p = parent.get(l.key) ?? null;
    (byParent.get(p) ?? byParent.set(p, []).get(p)!).push(l);
  }
  const rows: string[][] = [];
  const names = new Map<string, string>();
  const seen = new Set<string>();
  const walk = (parent: string | null, depth: number) => {
    for (const l of byParent.get(parent) ?? []) {
      if (seen.has(l.key)) continue;
      seen.add(l.key);
      names.set(l.key, `L${rows.length + 1}`);
      const name = `${"  ".repeat(depth)}L${rows.length + 1}${l.key === cfg.current ? "*" : ""}`;
      rows.push([
        name,
        l.ranks,
        l.distributed ? "yes" : "no",
        String(l.visits),
        ms(l.iterMs),
        ms(l.mpiMs),
        l.mtct === null ? "-" : l.mtct.toFixed(3),
        l.phase ? `phase ${l.phase}` : l.key.length > 60 ? `${l.key.slice(0, 57)}...` : l.key,
      ]);
      walk(l.key, depth + 1);
    }
  };
  walk(null, 0);
  const text = table(["LOOP", "RANKS", "DISTRIBUTED", "ITERATIONS", "ITER_MS", "MPI_MS", "MTCT", "CALLS / PHASE"], rows);
  return `\nCommunication loops (${cfg.ntasks} ranks; * = current distributed loop; MTCT = MPI / compute time, newest window):\n${text
    .split("\n")
    .map((x) => (x ? `  ${x}` : x))
    .join("\n")}${efficiencyLine(cfg, names)}`;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const best = (n: number | null) => (n === null ? "no limit (no MPI time)" : `${n} node${n === 1 ? "" : "s"}`);

/** Rigid jobs after their end: communication share per loop and the model's best size (like seff). */
function efficiencyLine(cfg: Cfg, names: Map<string, string>): string {
  const e = cfg.efficiency;
  if (!e) return "";
  const per = e.loops.map((l) => `${names.get(l.key) ?? "?"} ${pct(l.commShare)} (best ${best(l.bestNodes)})`).join(", ");
  return (
    `\nEfficiency: communication ${pct(e.commShare)} of loop time on ${e.nodes} node${e.nodes === 1 ? "" : "s"}; ` +
    `the model's best size (efficiency per run time): ${best(e.bestNodes)}\n  per loop: ${per}\n`
  );
}
