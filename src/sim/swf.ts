/**
 * Standard Workload Format reader (Feitelson's Parallel Workloads Archive): one job per line,
 * 18 whitespace-separated numeric fields, -1 for unknown; lines starting with ";" are header
 * comments ("; MaxNodes: 256"). Bad lines are reported with their line number, never guessed at.
 */

export const SWF_FIELDS = [
  "jobNumber",
  "submitTime",
  "waitTime",
  "runTime",
  "allocatedProcs",
  "avgCpuTime",
  "usedMemory",
  "requestedProcs",
  "requestedTime",
  "requestedMemory",
  "status",
  "userId",
  "groupId",
  "executable",
  "queue",
  "partition",
  "precedingJob",
  "thinkTime",
] as const;

export type SwfRecord = Record<(typeof SWF_FIELDS)[number], number>;

export interface SwfIssue {
  line: number;
  message: string;
}

export interface SwfTrace {
  /** Header comments as key -> value ("MaxNodes" -> "256"). */
  header: Record<string, string>;
  records: { line: number; record: SwfRecord }[];
  /** Lines that are not valid SWF. */
  errors: SwfIssue[];
}

export function parseSwf(text: string): SwfTrace {
  const header: Record<string, string> = {};
  const records: SwfTrace["records"] = [];
  const errors: SwfIssue[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!.trim();
    if (raw === "") continue;
    if (raw.startsWith(";")) {
      const m = /^;\s*([A-Za-z][\w ]*?)\s*:\s*(.*)$/.exec(raw);
      if (m) header[m[1]!] = m[2]!.trim();
      continue;
    }
    const parts = raw.split(/\s+/);
    if (parts.length !== SWF_FIELDS.length) {
      errors.push({ line: lineNo, message: `expected ${SWF_FIELDS.length} fields, found ${parts.length}` });
      continue;
    }
    const record = {} as SwfRecord;
    let bad: string | undefined;
    for (let f = 0; f < SWF_FIELDS.length; f++) {
      const p = parts[f]!;
      const v = Number(p);
      if (!/^-?\d+(\.\d+)?$/.test(p) || !Number.isFinite(v)) {
        bad = `field ${f + 1} (${SWF_FIELDS[f]}) is "${p}", not a number`;
        break;
      }
      if (v < 0 && v !== -1) {
        bad = `field ${f + 1} (${SWF_FIELDS[f]}) is ${p}: negative values other than -1 (unknown) are invalid`;
        break;
      }
      record[SWF_FIELDS[f]!] = v;
    }
    if (bad) {
      errors.push({ line: lineNo, message: bad });
      continue;
    }
    if (record.submitTime < 0) {
      errors.push({ line: lineNo, message: "field 2 (submitTime) is unknown (-1)" });
      continue;
    }
    records.push({ line: lineNo, record });
  }
  return { header, records, errors };
}

/** A trace job the simulator can replay, or why not. */
export interface TraceJob {
  id: number;
  line: number;
  submit: number;
  runtime: number;
  procs: number;
  /** Requested time (binding: the simulator kills a job at its limit), or the run time when the trace does not say. */
  estimate: number;
  /** Field 12, the user id; -1 when the trace does not say (lublin_256's model has no users). */
  user?: number;
}

export function traceJobs(trace: SwfTrace): { jobs: TraceJob[]; skipped: SwfIssue[] } {
  const jobs: TraceJob[] = [];
  const skipped: SwfIssue[] = [];
  const seen = new Set<number>();
  for (const { line, record: r } of trace.records) {
    const procs = r.allocatedProcs > 0 ? r.allocatedProcs : r.requestedProcs;
    if (procs <= 0) {
      skipped.push({ line, message: `job ${r.jobNumber}: processor count unknown` });
      continue;
    }
    if (r.runTime <= 0) {
      skipped.push({ line, message: `job ${r.jobNumber}: run time ${r.runTime === -1 ? "unknown" : "0"}` });
      continue;
    }
    if (seen.has(r.jobNumber)) {
      skipped.push({ line, message: `job ${r.jobNumber}: duplicate job number` });
      continue;
    }
    seen.add(r.jobNumber);
    // The requested time is the job's limit, as live: one that ran longer is killed at it. A trace
    // that does not say bounds the job by what it used.
    const estimate = r.requestedTime > 0 ? r.requestedTime : r.runTime;
    jobs.push({ id: r.jobNumber, line, submit: r.submitTime, runtime: r.runTime, procs, estimate, user: r.userId });
  }
  jobs.sort((a, b) => a.submit - b.submit || a.id - b.id);
  return { jobs, skipped };
}

/**
 * The simulated machine a trace's header describes, for nodes of `cores` processors. SWF counts a
 * job's size in processors (fields 5 and 8), so the machine is the trace's MaxProcs processors
 * (MaxNodes when it gives no MaxProcs), one per node unless `cores` packs them. A trace whose
 * MaxNodes differs (120 nodes of 2 processors: MaxProcs 240) gets a note saying how it was read.
 */
export function traceMachine(header: Record<string, string>, cores: number): { nodes: number; note?: string } | undefined {
  const maxNodes = Number(header.MaxNodes) > 0 ? Number(header.MaxNodes) : undefined;
  const maxProcs = Number(header.MaxProcs) > 0 ? Number(header.MaxProcs) : undefined;
  const procs = maxProcs ?? maxNodes;
  if (procs === undefined) return undefined;
  const nodes = Math.ceil(procs / cores);
  if (maxNodes === undefined || maxProcs === undefined || nodes === maxNodes) return { nodes };
  const perNode = maxProcs / maxNodes;
  const pack = cores === 1 && Number.isInteger(perNode) && perNode > 1 ? `: --cores-per-node ${perNode} packs them on ${maxNodes} nodes` : "";
  return { nodes, note: `${nodes} nodes of ${cores} processor(s), the trace's MaxProcs (SWF sizes are processors; its MaxNodes is ${maxNodes}${pack}; --nodes N sets the machine)` };
}
