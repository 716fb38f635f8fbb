/**
 * Pure pieces of what public Slurm scripts need (measured against Slurm 22.05 on this machine):
 * sbatch's and srun's zero-padded file patterns, #SBATCH --parsable, scontrol's -o/-dd and
 * `show jobid`, squeue -r/-l, scancel -s's signal names.
 */
import { expect, test } from "bun:test";
import { expandPattern, patternVars, perRankPattern } from "../../src/roles/output-patterns.ts";
import type { JobListRow } from "../../src/store/jobs.ts";
import { sbatchParsable, scriptFlags } from "../../src/cli/directives.ts";
import { jobArgs } from "../../src/cli/submit.ts";
import { scontrolOptions } from "../../src/cli/scontrol.ts";
import { scontrolJobText } from "../../src/cli/scontrol-job.ts";
import { sallocEnvWords, sbatchEnvWords } from "../../src/cli/sbatch-env.ts";
import { inheritedJobVars, slurmJobVars } from "../../src/roles/slurm-env.ts";
import type { JobDetail } from "../../src/api/schemas.ts";
import { squeueToQueue } from "../../src/cli/squeue.ts";
import { signalName } from "../../src/cli/cancel.ts";
import { sacctToHistory } from "../../src/cli/sacct.ts";
import { resourceFields, type ResourceFlags } from "../../src/cli/resources.ts";

const row = (o: Partial<JobListRow>) => ({ id: 12, name: "myname", arrayJobId: null, arrayTaskId: null, user: "root", ...o }) as JobListRow;

test("sbatch's patterns: a width zero-pads numbers, not names; %s is batch, %t and %n 0, %a outside an array Slurm's NO_VAL, %b stays", () => {
  const vars = patternVars(row({}), "n1");
  expect(expandPattern("o-%s-%n-%t-%3j-%5N-%10x-%4u-%2a-%b-%%.out", vars, "/d")).toBe("/d/o-batch-0-0-012-n1-myname-root-4294967294-%b-%.out");
  expect(expandPattern("a-%3A-%3a-%5t-%0j.out", patternVars(row({ id: 13, arrayJobId: 13, arrayTaskId: 3 })), "/d")).toBe("/d/a-013-003-00000-13.out");
  expect(expandPattern("%5a/slurm-%A-%5a.out", patternVars(row({ id: 7, arrayJobId: 6, arrayTaskId: 1 })), "/d")).toBe("/d/00001/slurm-6-00001.out");
});

test("srun's: %5J pads the job id of job.step; widths mark a per-rank pattern too", () => {
  expect(expandPattern("e-%5J-%05t.out", { J: "15.1", t: "0" }, "/d")).toBe("/d/e-00015.1-00000.out");
  expect([perRankPattern("s-%2t.out"), perRankPattern("s-%3n.out"), perRankPattern("s-%N.out"), perRankPattern("s-%%t-%j.out")]).toEqual([true, true, true, false]);
});

test("#SBATCH --parsable is the script's own (not in an #EBB script)", () => {
  expect(sbatchParsable("#!/bin/sh\n#SBATCH --parsable\n#SBATCH -n 2\ntrue\n")).toBe(true);
  expect(sbatchParsable("#!/bin/sh\n#SBATCH -n 2\ntrue\n#SBATCH --parsable\n")).toBe(false);
  expect(sbatchParsable("#!/bin/sh\n#EBB -n 2\n#SBATCH --parsable\n")).toBe(false);
});

test("scontrol's options anywhere: -o one line, -d/-dd/-Q/-a nothing", () => {
  expect(scontrolOptions(["show", "job", "-o", "5"])).toEqual({ words: ["show", "job", "5"], oneLiner: true });
  expect(scontrolOptions(["-dd", "show", "jobid", "5"])).toEqual({ words: ["show", "jobid", "5"], oneLiner: false });
  expect(scontrolOptions(["--oneliner", "-Q", "show", "hostnames"])).toEqual({ words: ["show", "hostnames"], oneLiner: true });
});

test("squeue -r is a line per pending array task, -l squeue's long columns", () => {
  expect(squeueToQueue(["-r", "-u", "alice"])).toEqual(["--array-tasks", "--user=alice", "--format=%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"]);
  expect(squeueToQueue(["-l", "-h"])).toEqual(["--noheader", "--format=%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"]);
});

test("scancel -s: a name with or without SIG, or a number; anything else named in the error", () => {
  expect([signalName("USR1"), signalName("SIGUSR2"), signalName("10")]).toEqual(["SIGUSR1", "SIGUSR2", "SIGUSR1"]);
  expect(() => signalName("B:USR1")).toThrow("--signal B:USR1:");
  expect(() => signalName("FOO")).toThrow("--signal FOO: FOO is not a signal ebb sends");
});

test("a count of 0 of any resource asks for none (--gres=mic:0, gpu:a800:0, --gpus-per-node=0, --gpus=a100:0), as Slurm takes them; a count of another resource is still refused", () => {
  for (const a of [{ gres: "mic:0" }, { gres: "gpu:a800:0,nvme:0" }, { "gpus-per-node": "0" }, { gpus: "a100:0" }, { "gpus-per-task": "0" }]) {
    const f = resourceFields(a as ResourceFlags, {});
    expect([f.gpus, f.gpusPerNode, f.gpusPerTask]).toEqual([undefined, undefined, undefined]);
  }
  expect(() => resourceFields({ gres: "mic:2" } as ResourceFlags, {})).toThrow("mic");
});

test("squeue -t PD,R,CG: the states ebb has (a job is never COMPLETING or CONFIGURING under ebb)", () => {
  expect(squeueToQueue(["-h", "-j", "12", "-t", "PD,R,CG"])).toContain("--state=PENDING,RUNNING");
});

test("squeue -n NAME, as wait-for-my-jobs loops filter the queue", () => {
  expect(squeueToQueue(["-h", "-n", "train", "-u", "bob"])).toEqual(["--noheader", "--name=train", "--user=bob", "--format=%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"]);
});

test("sacct --delimiter with -P: the fields joined by it (a job-stats reader's --delimiter=' ' --parsable2 --noheader)", () => {
  expect(sacctToHistory(["--jobs=12.batch", "--delimiter= ", "--parsable2", "--noheader", "--format=MaxRSS,Elapsed"])).toEqual(["--jobs=12.batch", "--delimiter= ", "--parsable2", "--noheader", "--steps", "--format=MaxRSS,Elapsed"]);
});

test("#SBATCH hetjob (a heterogeneous job's components) is refused naming what to do instead, not as an unexpected argument", () => {
  expect(() => scriptFlags("#!/bin/bash\n#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2\nsrun --het-group=0 x\n", jobArgs, "het.sh")).toThrow(
    "het.sh line 3: #SBATCH hetjob: ebb has no heterogeneous jobs; submit each component as a job of its own (--dependency=after:ID starts one once the other has started)",
  );
});

test("scontrol show job: Slurm 22.05's keys in its order for a running batch job, salloc's without the files; values ebb knows", () => {
  // `scontrol show job` of `sbatch -N1 -n2 -t 10 -J run1 -o o-%j.out --wrap 'sleep 30'` under Slurm 22.05 here.
  const slurm = `JobId=1 JobName=run1
   UserId=root(0) GroupId=root(0) MCS_label=N/A
   Priority=4294901759 Nice=0 Account=(null) QOS=(null)
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:02 TimeLimit=00:10:00 TimeMin=N/A
   SubmitTime=2026-12-01T20:30:43 EligibleTime=2026-12-01T20:30:43
   AccrueTime=2026-12-01T20:30:43
   StartTime=2026-12-01T20:30:43 EndTime=2026-12-01T20:40:43 Deadline=N/A
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-01T20:30:43 Scheduler=Main
   Partition=debug AllocNode:Sid=localhost:12601
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=n1
   BatchHost=n1
   NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   TRES=cpu=2,mem=2000M,node=1,billing=2
   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*
   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)
   Command=(null)
   WorkDir=/tmp/s21b
   StdErr=/tmp/s21b/o-1.out
   StdIn=/dev/null
   StdOut=/tmp/s21b/o-1.out
   Power=
   

`;
  const keys = (text: string) => text.split(/\s+/).flatMap((w) => (/^([^=]+)=/.exec(w)?.[1] ?? []));
  const job = {
    id: 1, name: "run1", kind: "batch", state: "RUNNING", reason: null, dependency: null, requeue: true, restarts: 2, exitCode: null, timeLimit: 600, held: false,
    submitTime: "2026-12-01T20:30:43Z", beginTime: null, startTime: "2026-12-01T20:30:43Z", endTime: null, partition: "debug", nodelist: [], exclude: [],
    allocation: ["n1"], shares: [{ node: "n1", cpus: 2, memMiB: 2000, gpus: [] }], nodes: 1, tasks: 2, tasksPerNode: null, resources: { cpusPerTask: 1, memPerCpuMiB: 1000, exclusive: false },
    args: null, cwd: "/tmp/s21b", output: "/tmp/s21b/o-1.out", error: null, user: "root", arrayJobId: null, env: { SLURM_SUBMIT_HOST: "localhost" },
  } as unknown as JobDetail;
  const text = scontrolJobText(job, { uid: "0", group: "root", gid: "0" }, Date.parse("2026-12-01T20:30:45Z"));
  expect(keys(text)).toEqual(keys(slurm));
  // A running job's priority ebb no longer keeps (1), a waiting one's rounded, a held one's 0 (as Slurm's).
  expect(text).toContain("\n   Priority=1 Nice=0 Account=(null) QOS=(null)\n");
  expect(scontrolJobText({ ...job, state: "PENDING" }, { uid: "0", group: "root", gid: "0" }, 0, 10234.6)).toContain("Priority=10235 ");
  expect(scontrolJobText({ ...job, state: "PENDING", held: true }, { uid: "0", group: "root", gid: "0" }, 0, 10234.6)).toContain("Priority=0 ");
  expect(text).toEndWith("   StdOut=/tmp/s21b/o-1.out\n   Power=\n   \n\n");
  for (const field of ["Requeue=1 Restarts=2 BatchFlag=1 Reboot=0 ExitCode=0:0", "RunTime=00:00:02 TimeLimit=00:10:00", "TRES=cpu=2,mem=2000M,node=1,billing=2", "MinCPUsNode=1 MinMemoryCPU=1000M", "OverSubscribe=OK", "AllocNode:Sid=localhost:0"])
    expect(text).toContain(field);
  // salloc's job: BatchFlag=0, no StdErr/StdIn/StdOut; no limit of its own is UNLIMITED.
  const salloc = scontrolJobText({ ...job, env: { EBB_SALLOC: "1" }, timeLimit: 365 * 86400 }, { uid: "0", group: "root", gid: "0" }, 0);
  expect(salloc).toContain("BatchFlag=0");
  expect(salloc).toContain("TimeLimit=UNLIMITED");
  expect(keys(salloc).filter((k) => k.startsWith("Std"))).toEqual([]);
  // A pending job's NumNodes: MIN-MAX when its submission gave -N (Slurm's max_nodes set: -N 2 is 2-2) or a range, its count when the tasks sized it (slurm-wlm 22.05 side by side).
  const pending = { ...job, state: "PENDING", allocation: [], shares: [], nodes: 2, minNodes: 2, maxNodes: 2 } as unknown as JobDetail;
  const numNodes = (j: JobDetail) => /NumNodes=(\S+)/.exec(scontrolJobText(j, { uid: "0", group: "root", gid: "0" }, 0))?.[1];
  expect(numNodes({ ...pending, env: { EBB_NODES_GIVEN: "1" } })).toBe("2-2");
  expect(numNodes(pending)).toBe("2");
  expect(numNodes({ ...pending, nodes: 1, minNodes: 1, maxNodes: 3 })).toBe("1-3");
  expect(numNodes({ ...pending, state: "RUNNING", allocation: ["n1", "n2"], env: { EBB_NODES_GIVEN: "1" } })).toBe("2");
});

test("sbatch's input variables are its flags (SBATCH_TIMELIMIT is --time); SLURM_NTASKS is none of them, SLURM_HINT is --hint without SBATCH_HINT", () => {
  expect(sbatchEnvWords({ SBATCH_TIMELIMIT: "7", SBATCH_JOB_NAME: "envname", SBATCH_MEM_PER_NODE: "2G", SBATCH_REQUEUE: "1", SBATCH_EXCLUSIVE: "user", SLURM_NTASKS: "3", SLURM_HINT: "nomultithread", SBATCH_ACCOUNT: "" })).toEqual([
    { name: "SLURM_HINT", word: "--hint=nomultithread" },
    { name: "SBATCH_JOB_NAME", word: "--job-name=envname" },
    { name: "SBATCH_MEM_PER_NODE", word: "--mem=2G" },
    { name: "SBATCH_TIMELIMIT", word: "--time=7" },
    { name: "SBATCH_REQUEUE", word: "--requeue" },
    { name: "SBATCH_EXCLUSIVE", word: "--exclusive=user" },
  ]);
  expect(sbatchEnvWords({ SBATCH_HINT: "compute_bound", SLURM_HINT: "nomultithread", SBATCH_EXCLUSIVE: "" })).toEqual([{ name: "SBATCH_HINT", word: "--hint=compute_bound" }, { name: "SBATCH_EXCLUSIVE", word: "--exclusive" }]);
});

test("salloc's input variables (SALLOC_TIMELIMIT is --time), without those of a batch script's name, files and arrays, and never sbatch's", () => {
  expect(sallocEnvWords({ SALLOC_TIMELIMIT: "7", SALLOC_PARTITION: "debug", SALLOC_JOB_NAME: "x", SALLOC_OUTPUT: "o", SALLOC_ARRAY_INX: "1-2", SALLOC_NO_KILL: "", SALLOC_EXCLUSIVE: "", SBATCH_TIMELIMIT: "9" })).toEqual([
    { name: "SALLOC_PARTITION", word: "--partition=debug" },
    { name: "SALLOC_TIMELIMIT", word: "--time=7" },
    { name: "SALLOC_NO_KILL", word: "--no-kill" },
    { name: "SALLOC_EXCLUSIVE", word: "--exclusive" },
  ]);
});

test("a job's variables submitted with a job (sbatch in a job) are under every process's own, as Slurm passes them on", () => {
  expect(inheritedJobVars({ SLURM_ARRAY_TASK_ID: "2", SLURM_NTASKS: "3", SLURM_CPUS_PER_TASK: "1", HOME: "/root", SLURM_SUBMIT_HOST: "vm" })).toEqual({ SLURM_ARRAY_TASK_ID: "2", SLURM_NTASKS: "3" });
  const vars = slurmJobVars({ id: 7, name: "x", nodes: ["n1"], tasks: [1], tasksGiven: false, cpus: [1], submitDir: "/d", cluster: "c", partition: "p", dependency: "afterok:6" });
  expect(vars.SLURM_JOB_DEPENDENCY).toBe("afterok:6");
  expect(slurmJobVars({ id: 7, name: "x", nodes: ["n1"], tasks: [1], tasksGiven: false, cpus: [1], submitDir: "/d", cluster: "c", partition: "p" }).SLURM_JOB_DEPENDENCY).toBeUndefined();
});
