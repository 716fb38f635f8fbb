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

test("squeue -n NAME, as wait-for-my-jobs loops filter the queue", () => {
  expect(squeueToQueue(["-h", "-n", "train", "-u", "bob"])).toEqual(["--noheader", "--name=train", "--user=bob", "--format=%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"]);
});

test("sacct --delimiter with -P: the fields joined by it (a job-stats reader's --delimiter=' ' --parsable2 --noheader)", () => {
  expect(sacctToHistory(["--jobs=12.batch", "--delimiter= ", "--parsable2", "--noheader", "--format=MaxRSS,Elapsed"])).toEqual(["--jobs=12", "--delimiter= ", "--parsable2", "--noheader", "--steps", "--format=MaxRSS,Elapsed"]);
});

test("#SBATCH hetjob (a heterogeneous job's components) is refused naming what to do instead, not as an unexpected argument", () => {
  expect(() => scriptFlags("#!/bin/bash\n#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2\nsrun --het-group=0 x\n", jobArgs, "het.sh")).toThrow(
    "het.sh line 3: #SBATCH hetjob: ebb has no heterogeneous jobs; submit each component as a job of its own (--dependency=after:ID starts one once the other has started)",
  );
});
