/**
 * The rows of an `ebb sim --jobs-csv` file, by policy and job, and each job's bounded slowdown:
 * what bench/_bsld-gap.ts and bench/_bsld-tail.ts both read.
 */
import { readFileSync } from "node:fs";

export interface JobRow {
  job: number;
  submit: number;
  start: number;
  end: number;
  wait: number;
  turnaround: number;
  reference: number;
  nodes: number;
  minNodes: number;
  startNodes: number;
}

export const TAU = 10;
export const bsld = (r: JobRow) => Math.max(1, r.turnaround / Math.max(r.reference, TAU));

/** The rows of policy `a` and of policy `b`, each by job id; an error names the policies the file has. */
export function jobRows(file: string, a: string, b: string): [Map<number, JobRow>, Map<number, JobRow>] {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  const head = lines[0]!.split(",");
  const col = (name: string) => head.indexOf(name);
  const by = new Map<string, Map<number, JobRow>>();
  for (const line of lines.slice(1)) {
    const f = line.split(",");
    const num = (name: string) => Number(f[col(name)]);
    const policy = f[col("policy")]!;
    if (!by.has(policy)) by.set(policy, new Map());
    by.get(policy)!.set(num("job"), { job: num("job"), submit: num("submit"), start: num("start"), end: num("end"), wait: num("wait"), turnaround: num("turnaround"), reference: num("reference"), nodes: num("nodes"), minNodes: num("min_nodes"), startNodes: num("start_nodes") });
  }
  const rowsOf = (p: string): Map<number, JobRow> => {
    const m = by.get(p);
    if (!m) throw new Error(`${file}: no rows of ${p} (has ${[...by.keys()].join(", ")})`);
    return m;
  };
  return [rowsOf(a), rowsOf(b)];
}
