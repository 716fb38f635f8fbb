/**
 * `--format` of `ebb queue` and `ebb history`, as Slurm users write it: squeue's `-o` strings,
 * `"%.18i %.8u %T %M"` (`%[.][WIDTH]CODE`: a width pads and cuts, a '.' aligns right, other text
 * is kept), or a list of field names as squeue's `-O` and sacct's `--format` take them,
 * `"JobID,User,State%12"` (a width after `%` or `:`), printed as a table. Pure: jobs in, text out.
 */
import { gpuTime, mib, resourcesColumn } from "./resource-text.ts";
import type { JobView } from "../api/schemas.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { formatDuration } from "../util/time.ts";
import { localTime } from "./jobid.ts";

/** What a row knows beyond its job: its label (an array's pending tasks share one), the time, an expected start. */
export interface RowContext {
  label: string;
  now: number;
  /** squeue --start: when and where the job is expected to start. */
  expected?: { start: string; nodes: string[] };
}

interface Field {
  /** squeue's letter ("" for none). */
  code: string;
  /** Its name in squeue -O field lists, whose header is `header`; "" for none. */
  name: string;
  header: string;
  /** Its name in sacct --format field lists, whose header is the name in capitals. */
  sacct?: string;
  value(j: JobView, r: RowContext): string;
}

/** Slurm's short state codes (ADAPTING is Slurm's RESIZING). */
export const COMPACT: Record<string, string> = { PENDING: "PD", RUNNING: "R", ADAPTING: "RS", COMPLETED: "CD", FAILED: "F", CANCELLED: "CA", TIMEOUT: "TO", NODE_FAIL: "NF", OUT_OF_MEMORY: "OOM" };

const used = (j: JobView, now: number) => (j.startTime ? ((j.endTime ? Date.parse(j.endTime) : now) - Date.parse(j.startTime)) / 1000 : 0);
const nodeList = (j: JobView) => (j.allocation.length > 0 ? compressHostlist(j.allocation) : "");
const cpusOf = (j: JobView) => j.shares.reduce((k, s) => k + s.cpus, 0);
/** sacct's ReqTRES of a job that has its resources: billing=4,cpu=4,mem=2000M,node=1 (gres/gpu=N with GPUs). */
function tres(j: JobView): string {
  if (j.shares.length === 0) return "";
  const gpus = j.shares.reduce((k, s) => k + s.gpus.length, 0);
  const cpus = cpusOf(j);
  return `billing=${cpus},cpu=${cpus},${gpus > 0 ? `gres/gpu=${gpus},` : ""}mem=${j.shares.reduce((k, s) => k + s.memMiB, 0)}M,node=${j.shares.length}`;
}
/** A duration as sacct writes it: HH:MM:SS, D-HH:MM:SS from a day on (squeue's %M drops the leading zeros). */
function sacctDuration(seconds: number): string {
  const t = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  const hms = `${pad(Math.floor((t % 86400) / 3600))}:${pad(Math.floor((t % 3600) / 60))}:${pad(t % 60)}`;
  return t >= 86400 ? `${Math.floor(t / 86400)}-${hms}` : hms;
}
const reason = (j: JobView) => (j.state === "PENDING" ? (j.reason ?? "None") : (j.reason ?? ""));

export const FIELDS: readonly Field[] = [
  { code: "i", name: "JobID", sacct: "JobID", header: "JOBID", value: (_, r) => r.label },
  // squeue's letters (22.05, side by side): %A the job's own id (an array task's too), %a the account, %F and %K the array's id and the task's, %q the QOS.
  { code: "A", name: "", header: "JOBID", value: (j) => String(j.id) },
  { code: "a", name: "", header: "ACCOUNT", value: () => "(null)" },
  { code: "q", name: "", header: "QOS", value: () => "(null)" },
  { code: "F", name: "ArrayJobID", header: "ARRAY_JOB_ID", value: (j) => String(j.arrayJobId ?? j.id) },
  { code: "K", name: "ArrayTaskID", header: "ARRAY_TASK_ID", value: (j) => (j.arrayTaskId === null ? "N/A" : String(j.arrayTaskId)) },
  { code: "j", name: "Name", sacct: "JobName", header: "NAME", value: (j) => j.name },
  { code: "u", name: "UserName", sacct: "User", header: "USER", value: (j) => j.user ?? "" },
  { code: "P", name: "Partition", sacct: "Partition", header: "PARTITION", value: (j) => j.partition ?? "" },
  { code: "T", name: "State", sacct: "State", header: "STATE", value: (j) => j.state },
  { code: "t", name: "StateCompact", header: "ST", value: (j) => COMPACT[j.state] ?? j.state },
  { code: "M", name: "TimeUsed", header: "TIME", value: (j, r) => formatDuration(used(j, r.now)) },
  { code: "", name: "", sacct: "Elapsed", header: "ELAPSED", value: (j, r) => sacctDuration(used(j, r.now)) },
  { code: "l", name: "TimeLimit", sacct: "Timelimit", header: "TIME_LIMIT", value: (j) => formatDuration(j.timeLimit) },
  { code: "L", name: "TimeLeft", header: "TIME_LEFT", value: (j, r) => (j.endTime ? "0:00" : formatDuration(j.timeLimit - used(j, r.now))) },
  { code: "D", name: "NumNodes", sacct: "NNodes", header: "NODES", value: (j) => String(j.allocation.length || j.nodes) },
  { code: "R", name: "ReasonList", header: "NODELIST(REASON)", value: (j) => (j.state === "PENDING" || j.allocation.length === 0 ? (reason(j) ? `(${reason(j)})` : "") : nodeList(j)) },
  { code: "r", name: "Reason", sacct: "Reason", header: "REASON", value: reason },
  { code: "N", name: "NodeList", sacct: "NodeList", header: "NODELIST", value: nodeList },
  { code: "S", name: "StartTime", sacct: "Start", header: "START_TIME", value: (j, r) => (j.startTime ? localTime(j.startTime) : r.expected ? localTime(r.expected.start) : "N/A") },
  { code: "Y", name: "SchedNodes", header: "SCHEDNODES", value: (j, r) => (j.state === "PENDING" && r.expected ? compressHostlist(r.expected.nodes) : "(null)") },
  { code: "V", name: "SubmitTime", sacct: "Submit", header: "SUBMIT_TIME", value: (j) => localTime(j.submitTime) },
  { code: "e", name: "EndTime", sacct: "End", header: "END_TIME", value: (j) => (j.endTime ? localTime(j.endTime) : "N/A") },
  // sacct's CODE:SIGNAL, 0:0 until the job has ended (ebb keeps a signal's death as its code, 128 + N).
  { code: "", name: "", sacct: "ExitCode", header: "EXIT_CODE", value: (j) => `${j.exitCode ?? 0}:0` },
  { code: "E", name: "Dependency", header: "DEPENDENCY", value: (j) => j.dependency ?? "(null)" },
  { code: "n", name: "ReqNodes", header: "REQ_NODES", value: (j) => compressHostlist(j.nodelist) },
  { code: "x", name: "ExcNodes", header: "EXC_NODES", value: (j) => compressHostlist(j.exclude) },
  { code: "o", name: "Command", header: "COMMAND", value: (j) => (j.private ? "(private)" : (j.argv?.join(" ") ?? "(batch script)")) },
  { code: "Z", name: "WorkDir", sacct: "WorkDir", header: "WORK_DIR", value: (j) => (j.private ? "(private)" : j.cwd) },
  { code: "C", name: "NumCPUs", sacct: "AllocCPUS", header: "CPUS", value: (j) => String(j.shares.reduce((k, s) => k + s.cpus, 0) || "") },
  { code: "m", name: "MinMemory", sacct: "ReqMem", header: "MIN_MEMORY", value: (j) => (j.shares.length > 0 ? mib(Math.max(...j.shares.map((s) => s.memMiB))) : "") },
  { code: "b", name: "TresPerNode", sacct: "AllocTRES", header: "TRES", value: (j) => resourcesColumn(j) },
  { code: "", name: "", sacct: "TotalCPU", header: "TOTAL_CPU", value: (j) => (j.usage ? formatDuration(j.usage.cpuSec) : "") },
  { code: "", name: "", sacct: "MaxRSS", header: "MAX_RSS", value: (j) => (j.usage ? mib(j.usage.peakMemMiB) : "") },
  { code: "", name: "", sacct: "GPUTime", header: "GPU_TIME", value: gpuTime },
  // sacct's other common fields: NCPUS and ReqCPUS are the job's CPUs, ReqTRES its resources as sacct writes them; what ebb has no notion of (accounts, a job line's task count, virtual memory) is empty, as sacct leaves it for a job without it.
  { code: "", name: "", sacct: "NCPUS", header: "NCPUS", value: (j) => String(cpusOf(j) || "") },
  { code: "", name: "", sacct: "ReqCPUS", header: "REQCPUS", value: (j) => String(cpusOf(j) || "") },
  { code: "", name: "", sacct: "ReqTRES", header: "REQTRES", value: tres },
  { code: "", name: "", sacct: "CPUTime", header: "CPUTIME", value: (j, r) => sacctDuration(Math.round(used(j, r.now)) * cpusOf(j)) },
  { code: "", name: "", sacct: "CPUTimeRAW", header: "CPUTIMERAW", value: (j, r) => String(Math.round(used(j, r.now)) * cpusOf(j)) },
  { code: "", name: "", sacct: "ElapsedRaw", header: "ELAPSEDRAW", value: (j, r) => String(Math.round(used(j, r.now))) },
  { code: "", name: "", sacct: "Account", header: "ACCOUNT", value: () => "" },
  { code: "", name: "", sacct: "NTasks", header: "NTASKS", value: () => "" },
  { code: "", name: "", sacct: "MaxVMSize", header: "MAXVMSIZE", value: () => "" },
];

const byCode = new Map(FIELDS.filter((f) => f.code).map((f) => [f.code, f]));
/** A field list's names, without case: squeue's with their header, sacct's with theirs. */
const byName = new Map(
  FIELDS.flatMap((f) => [
    ...(f.name ? [[f.name.toLowerCase(), { field: f, header: f.header }] as const] : []),
    ...(f.sacct ? [[f.sacct.toLowerCase(), { field: f, header: f.sacct.toUpperCase() }] as const] : []),
  ]),
);

/** The codes for --help and errors (with their squeue -O names). */
export const FORMAT_HELP = FIELDS.filter((f) => f.code).map((f) => `%${f.code} ${f.name || f.header}`).join(", ");
/** The names of field lists: squeue's, sacct's. */
export const FIELD_NAMES = FIELDS.map((f) => [f.name, f.sacct].filter((n) => n && n !== "").filter((n, i, a) => a.indexOf(n) === i).join("/"));

interface Column {
  field: Field;
  width?: number;
  right: boolean;
  /** A field list's header: squeue's for its names, the name in capitals for sacct's. */
  header?: string;
}
/** A parsed --format: squeue's text with columns in it, or a list of columns for a table. */
export type Format = { kind: "text"; parts: (string | Column)[] } | { kind: "list"; columns: Column[] };

export function parseFormat(text: string): Format | { error: string } {
  if (text.trim() === "") return { error: 'the format is empty; e.g. "%i %u %T %M" or JobID,User,State' };
  if (/^\s*[A-Za-z]/.test(text)) {
    const columns: Column[] = [];
    for (const item of text.split(",").map((s) => s.trim())) {
      const m = /^([A-Za-z]+)(?:[%:](\.?)(\d{1,3}))?$/.exec(item);
      const named = m && byName.get(m[1]!.toLowerCase());
      if (!m || !named) return { error: `"${item}" is not a field; fields: ${FIELD_NAMES.join(", ")} (optionally with a width: State%12 or State:12)` };
      columns.push({ field: named.field, width: m[3] === undefined ? undefined : Number(m[3]), right: m[2] === ".", header: named.header });
    }
    return { kind: "list", columns };
  }
  const parts: (string | Column)[] = [];
  const re = /%([.-]?)(\d{0,3})([A-Za-z%])|([^%]+)/y;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    at = re.lastIndex;
    if (m[4] !== undefined) parts.push(m[4]);
    else if (m[3] === "%") parts.push("%");
    else {
      const field = byCode.get(m[3]!);
      if (!field) return { error: `%${m[3]} is not a field code; codes: ${FORMAT_HELP}, %% for a %` };
      parts.push({ field, width: m[2] ? Number(m[2]) : undefined, right: m[1] === "." });
    }
  }
  if (at !== text.length) return { error: `"${text.slice(at)}": a % needs a field code after it (e.g. %i, %.8u); %% for a %` };
  return { kind: "text", parts };
}

function fit(value: string, c: Column): string {
  if (c.width === undefined) return value;
  const cut = value.slice(0, c.width);
  return c.right ? cut.padStart(c.width) : cut.padEnd(c.width);
}

/**
 * The rows in `format`, a header line first unless `header` is false. `parsable`: a field list's
 * values unpadded, each followed by the separator but the last (sacct's --parsable2), or every one
 * (--parsable, `end`); the separator is "|" unless `delimiter` (sacct's --delimiter).
 */
export function renderFormat(format: Format, rows: readonly { job: JobView; ctx: RowContext }[], header = true, parsable?: "|" | "|end", delimiter = "|"): string {
  if (format.kind === "list" && parsable) {
    const line = (cells: (c: Column) => string) => format.columns.map((c) => cells(c)).join(delimiter) + (parsable === "|end" ? delimiter : "");
    const lines = rows.map(({ job, ctx }) => line((c) => c.field.value(job, ctx)));
    return [...(header ? [line((c) => c.header ?? c.field.header)] : []), ...lines].map((l) => `${l}\n`).join("");
  }
  if (format.kind === "list") {
    const line = (cells: (c: Column) => string) => format.columns.map((c) => fit(cells(c), c));
    const body = rows.map(({ job, ctx }) => line((c) => c.field.value(job, ctx)));
    const head = line((c) => c.header ?? c.field.header);
    const widths = head.map((h, i) => Math.max(header ? h.length : 0, ...body.map((r) => r[i]!.length)));
    const text = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
    return [...(header ? [text(head)] : []), ...body.map(text)].map((l) => `${l}\n`).join("");
  }
  const line = (cell: (c: Column) => string) => format.parts.map((p) => (typeof p === "string" ? p : fit(cell(p), p))).join("").trimEnd();
  const lines = rows.map(({ job, ctx }) => line((c) => c.field.value(job, ctx)));
  return [...(header ? [line((c) => c.field.header)] : []), ...lines].map((l) => `${l}\n`).join("");
}
