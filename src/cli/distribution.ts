/**
 * srun's and sbatch's -m/--distribution: `{*|block|cyclic|arbitrary|plane=N}[:{*|block|cyclic|fcyclic}[:...]][,{Pack|NoPack}]`.
 * The first level numbers the ranks over the nodes (sched/layout.ts ranksByNode); the socket and
 * core levels after it choose which cores of a node a rank is bound to, which ebb does its own way:
 * each local rank gets its own consecutive slice of the job's cores there, its nodes having no
 * sockets. Pack fills a node's CPUs before the next; ebb spreads the tasks evenly, as NoPack.
 */
import type { Distribution } from "../sched/layout.ts";
import { UsageError } from "./errors.ts";

export interface DistributionFlag {
  /** Undefined: block, ebb's default. */
  dist?: Distribution;
  /** The value as Slurm sets SLURM_DISTRIBUTION (cyclic, plane, block:cyclic, ...); a plane's size goes in SLURM_DIST_PLANESIZE. */
  text: string;
  /** The parts of the value that change nothing here, with why. */
  warnings: string[];
}

const LOWER = ["*", "block", "cyclic", "fcyclic"];

/** `planeSize`: SLURM_DIST_PLANESIZE, the size of a bare `plane` (as sbatch -m plane=N leaves it to srun). */
export function distributionFlag(value: string, flag = "--distribution", planeSize?: string): DistributionFlag {
  const [levels = "", pack, ...more] = value.split(",");
  const [first = "", ...lower] = levels.split(":");
  const bad = (why: string) => new UsageError(`${flag}=${value}: ${why}`);
  if (more.length > 0 || (pack !== undefined && !/^(no)?pack$/i.test(pack))) throw bad("expected LEVELS[,Pack|,NoPack]");
  if (lower.length > 2 || lower.some((l) => !LOWER.includes(l.toLowerCase()))) throw bad("the socket and core levels are *, block, cyclic or fcyclic");
  const warnings: string[] = [];
  const bound = lower.filter((l) => /^f?cyclic$/i.test(l));
  if (bound.length > 0) warnings.push(`${flag}=${value}: the :${bound.join(":")} level is ignored: ebb binds each rank of a node to its own consecutive cores (--cpu-bind=cores), without sockets`);
  // NoPack is what ebb does anyway.
  if (pack !== undefined && /^pack$/i.test(pack)) warnings.push(`${flag}=${value}: ,${pack} is ignored: ebb spreads a step's tasks evenly over its nodes`);
  const plane = /^plane(?:=(\d{1,6}))?$/i.exec(first);
  let dist: Distribution | undefined;
  if (plane) {
    const size = Number(plane[1] ?? planeSize);
    if (!Number.isInteger(size) || size < 1) throw bad(plane[1] === undefined ? "plane takes its size, plane=N (or SLURM_DIST_PLANESIZE)" : "plane=N takes N of 1 or more");
    dist = { kind: "plane", size };
  } else if (/^cyclic$/i.test(first)) dist = { kind: "cyclic" };
  else if (/^arbitrary$/i.test(first)) throw bad("ebb does not read SLURM_HOSTFILE; give the nodes with --nodelist and the ranks are numbered block or cyclic over them");
  else if (!/^(block|\*)$/i.test(first)) throw bad("the node level is block, cyclic, plane=N, arbitrary or *");
  // Slurm 22.05 keeps a Pack or NoPack in the value, lower case: block:block:block,pack.
  const text = [plane ? "plane" : first === "*" ? "block" : first.toLowerCase(), ...lower.map((l) => (l === "*" ? "block" : l.toLowerCase()))].join(":") + (pack !== undefined ? `,${pack.toLowerCase()}` : "");
  return { dist, text, warnings };
}

/** The variables Slurm sets for a distribution that was asked for. */
export function distributionVars(d: DistributionFlag): Record<string, string> {
  return { SLURM_DISTRIBUTION: d.text, ...(d.dist?.kind === "plane" ? { SLURM_DIST_PLANESIZE: String(d.dist.size) } : {}) };
}
