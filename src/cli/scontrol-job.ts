/**
 * `scontrol show job [ID]` in an ebb job: the job as scontrol 22.05 prints it, for the scripts
 * that log it at their start or pick a field of it (`grep -o 'StdOut=[^ ]*'`). What ebb has no
 * notion of (accounts, QOS, MCS labels, suspension, licenses) reads as a Slurm without them prints
 * it; what it does not know (a batch script's path: Command is its arguments, the submitting
 * session's id: Sid 0) is read so. Priority is a waiting job's (ebb's multifactor priority, rounded),
 * 0 for a held one (as Slurm's), and 1 for a job ebb has no priority for (started, or waiting on a
 * dependency or begin time): ebb keeps none once a job leaves the queue.
 */
import type { JobDetail } from "../api/schemas.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { shellQuote } from "../util/shell-quote.ts";
import { DEFAULT_PARTITION } from "../roles/slurm-env.ts";
import { MAX_TIME_LIMIT } from "../proto/requests.ts";
import { SALLOC_MARK } from "./salloc-env.ts";

/** Who the job's user is, by number: `user(uid)` and `group(gid)`. */
export interface JobOwner {
  uid: string;
  group: string;
  gid: string;
}

/** Seconds as scontrol writes a duration: HH:MM:SS, D-HH:MM:SS from a day on. */
function hms(totalSeconds: number): string {
  const t = Math.max(0, Math.round(totalSeconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  const day = Math.floor(t / 86400);
  const rest = `${pad(Math.floor((t % 86400) / 3600))}:${pad(Math.floor((t % 3600) / 60))}:${pad(t % 60)}`;
  return day > 0 ? `${day}-${rest}` : rest;
}

/** An ISO time as scontrol writes it: local, to the second, without a zone. */
function when(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Memory as Slurm's TRES writes it: 3G, 1536M. */
const mem = (mib: number) => (mib % 1024 === 0 ? `${mib / 1024}G` : `${mib}M`);

/** In the environment of a job whose submission gave a node count (-N): Slurm's max_nodes is set, and scontrol shows a pending job's NumNodes as MIN-MAX. */
export const NODE_COUNT_MARK = "EBB_NODES_GIVEN";

/** The text of `scontrol show job` for job `j`, at time `now` (epoch ms): scontrol 22.05's keys, in its order. */
export function scontrolJobText(j: JobDetail, owner: JobOwner, now: number, priority?: number): string {
  const submit = Date.parse(j.submitTime);
  const start = j.startTime === null ? undefined : Date.parse(j.startTime);
  const end = j.endTime === null ? (start === undefined ? undefined : start + j.timeLimit * 1000) : Date.parse(j.endTime);
  const cpus = j.shares.reduce((n, s) => n + s.cpus, 0);
  const memMiB = j.shares.reduce((n, s) => n + s.memMiB, 0);
  const gpus = j.shares.reduce((n, s) => n + s.gpus.length, 0);
  const nodes = j.allocation.length || j.nodes;
  const tasks = j.tasks ?? (j.tasksPerNode ?? 1) * nodes;
  const perTask = j.resources?.cpusPerTask ?? 1;
  const allCpus = cpus || tasks * perTask;
  const list = (names: readonly string[]) => (names.length > 0 ? compressHostlist([...names]) : "(null)");
  // salloc's job has no batch script (BatchFlag=0) and so no files; ebb keeps no batch script's path, only its text and arguments.
  const batch = j.kind === "batch" && j.env[SALLOC_MARK] === undefined;
  const command = j.kind === "batch" ? (j.args ? shellQuote(j.args) : "(null)") : shellQuote(j.argv ?? []);
  const array = j.arrayJobId === null ? "" : ` ArrayJobId=${j.arrayJobId} ArrayTaskId=${j.arrayTaskId}`;
  const eligible = j.held ? "Unknown" : j.beginTime === null ? when(submit) : when(Date.parse(j.beginTime));
  const r = j.resources;
  const minMemory = r?.memPerCpuMiB !== undefined ? `MinMemoryCPU=${mem(r.memPerCpuMiB)}` : `MinMemoryNode=${r?.memPerNodeMiB !== undefined ? mem(r.memPerNodeMiB) : "0"}`;
  const lines = [
    `JobId=${j.id}${array} JobName=${j.name}`,
    `UserId=${j.user ?? "(null)"}(${owner.uid}) GroupId=${owner.group}(${owner.gid}) MCS_label=N/A`,
    `Priority=${j.held ? 0 : priority === undefined ? 1 : Math.max(1, Math.round(priority))} Nice=0 Account=(null) QOS=(null)`,
    `JobState=${j.state} Reason=${j.reason ?? "None"} Dependency=${j.dependency ?? "(null)"}`,
    `Requeue=${j.requeue ? 1 : 0} Restarts=${j.restarts} BatchFlag=${batch ? 1 : 0} Reboot=0 ExitCode=${j.exitCode ?? 0}:0`,
    `RunTime=${hms(start === undefined ? 0 : ((j.endTime === null ? now : end!) - start) / 1000)} TimeLimit=${j.timeLimit >= MAX_TIME_LIMIT ? "UNLIMITED" : hms(j.timeLimit)} TimeMin=N/A`,
    `SubmitTime=${when(submit)} EligibleTime=${eligible}`,
    `AccrueTime=${batch ? eligible : "Unknown"}`,
    `StartTime=${start === undefined ? "Unknown" : when(start)} EndTime=${end === undefined ? "Unknown" : when(end)} Deadline=N/A`,
    `SuspendTime=None SecsPreSuspend=0 LastSchedEval=${when(start ?? submit)} Scheduler=Main`,
    `Partition=${j.partition ?? DEFAULT_PARTITION} AllocNode:Sid=${j.env.SLURM_SUBMIT_HOST ?? "(null)"}:0`,
    `ReqNodeList=${list(j.nodelist)} ExcNodeList=${list(j.exclude)}`,
    `NodeList=${j.allocation.length > 0 ? compressHostlist(j.allocation) : ""}`,
    ...(j.kind === "batch" && j.allocation.length > 0 ? [`BatchHost=${j.allocation[0]}`] : []),
    `NumNodes=${j.state === "PENDING" && (j.env[NODE_COUNT_MARK] !== undefined || j.minNodes !== j.maxNodes) ? `${j.minNodes}-${j.maxNodes}` : nodes} NumCPUs=${allCpus} NumTasks=${tasks} CPUs/Task=${perTask} ReqB:S:C:T=0:0:*:*`,
    `TRES=cpu=${allCpus}${memMiB > 0 ? `,mem=${mem(memMiB)}` : ""},node=${nodes},billing=${allCpus}${gpus > 0 ? `,gres/gpu=${gpus}` : ""}`,
    `Socks/Node=* NtasksPerN:B:S:C=${j.tasksPerNode ?? 0}:0:*:* CoreSpec=*`,
    `MinCPUsNode=${(j.tasksPerNode ?? 1) * perTask} ${minMemory} MinTmpDiskNode=0`,
    `Features=${r?.constraint?.length ? r.constraint.join("&") : "(null)"} DelayBoot=00:00:00`,
    `OverSubscribe=${r?.exclusive ? "NO" : "OK"} Contiguous=0 Licenses=(null) Network=(null)`,
    `Command=${command}`,
    `WorkDir=${j.cwd}`,
    ...(batch ? [`StdErr=${j.error ?? j.output ?? "(null)"}`, `StdIn=/dev/null`, `StdOut=${j.output ?? "(null)"}`] : []),
    `Power=`,
  ];
  return `${lines[0]}\n${lines.slice(1).map((l) => `   ${l}\n`).join("")}   \n\n`;
}
