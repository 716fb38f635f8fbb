/**
 * Slurm batch scripts on an ebb cluster of three agents (n1..n3): the SLURM_* variables a script
 * and its steps read, srun on the job's PATH and its exit status, --signal, --open-mode, --requeue
 * after a node failure, and #SBATCH flags refused with their reason. (test/e2e/sbatch-side-by-side
 * runs real scripts under Slurm and ebb and compares.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestCluster, waitFor } from "../support/cluster.ts";
import { compressHostlist } from "../../src/util/hostlist.ts";

let c: TestCluster;
beforeAll(async () => {
  c = new TestCluster({ agents: 0 });
  await c.startController();
  for (const n of ["n1", "n2", "n3"]) c.startAgent(n);
  await c.waitNodes(3, "IDLE", 90_000);
});
afterAll(async () => {
  await c?.stop();
});

/** Submits `lines` as a batch script (ebb submit, as a user would) with the script's arguments `args`; the job id, and what submit said on stderr. */
async function submit(name: string, lines: string[], flags: string[] = [], args: string[] = []): Promise<{ id: number; stderr: string }> {
  writeFileSync(join(c.dir, name), `${lines.join("\n")}\n`);
  const r = await c.ebb(["submit", ...flags, name, ...args]);
  if (r.code !== 0) throw new Error(`ebb submit ${name}: ${r.code} ${r.stderr}`);
  return { id: Number(/Submitted batch job (\d+)/.exec(r.stdout)?.[1]), stderr: r.stderr };
}

/** `body` while node `name`'s agent is dead (killed, so its node goes DOWN); started again after, whatever happened. */
async function withNodeLost<T>(name: string, body: () => Promise<T>): Promise<T> {
  c.agents.get(name)!.kill("SIGKILL");
  try {
    return await body();
  } finally {
    c.startAgent(name);
    await c.waitNodes(3, "IDLE", 60_000);
  }
}

/** name=value lines of a file, as a record. */
const vars = (text: string) => Object.fromEntries(text.split("\n").flatMap((l) => (/^\w+=/.test(l) ? [[l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]] : [])));

describe("what a script and its steps read", () => {
  test("an array task's SLURM_ARRAY_TASK_ID picks its line (sed -n \"${SLURM_ARRAY_TASK_ID}p\") of the file the script's argument names, with the array's count, bounds and step", async () => {
    writeFileSync(join(c.dir, "inputs.txt"), "alpha\nbeta\ngamma\ndelta\nepsilon\n");
    const { id } = await submit(
      "array.sh",
      ["#!/bin/bash", "#SBATCH --array=1-5:2", "#SBATCH -o array-%A_%a.out", 'echo "args=$#:$2"', 'echo "line=$(sed -n "${SLURM_ARRAY_TASK_ID}p" "$1")"', "env | grep ^SLURM_ARRAY_ | sort"],
      [],
      ["inputs.txt", "two words"],
    );
    for (const t of [id, id + 1, id + 2]) await c.waitJob(t, ["COMPLETED"]);
    expect([1, 3, 5].map((task) => vars(c.read(`array-${id}_${task}.out`)))).toEqual(
      [1, 3, 5].map((task, i) => ({
        args: "2:two words",
        line: ["alpha", "gamma", "epsilon"][i]!,
        SLURM_ARRAY_JOB_ID: String(id),
        SLURM_ARRAY_TASK_ID: String(task),
        SLURM_ARRAY_TASK_COUNT: "3",
        SLURM_ARRAY_TASK_MIN: "1",
        SLURM_ARRAY_TASK_MAX: "5",
        SLURM_ARRAY_TASK_STEP: "2",
      })),
    );
  });

  test("sbatch script.sh ARG...: the script's $1 $2 ... as given (spaces, quotes, $, the empty one), never read by a shell; ebb show lists them; --wrap takes none", async () => {
    const args = ["config.yaml", "two words", `it's "quoted"`, "$HOME", "", "-x"];
    const { id } = await submit("args.sh", ["#!/bin/bash", "#SBATCH -o args-%j.out", 'echo "$#"', 'for a in "$@"; do echo "[$a]"; done'], [], args);
    await c.waitJob(id, ["COMPLETED"]);
    expect(c.read(`args-${id}.out`)).toBe(`6\n${args.map((a) => `[${a}]\n`).join("")}`);
    expect(JSON.parse((await c.ebb(["show", String(id), "--json"])).stdout).args).toEqual(args);
    expect((await c.ebb(["show", String(id)])).stdout).toContain(`Args         config.yaml 'two words' 'it'\\''s "quoted"' '$HOME' '' -x\n`);
    const wrap = await c.ebb(["submit", "--wrap", "echo", "extra"]);
    expect({ code: wrap.code, stderr: wrap.stderr }).toEqual({ code: 2, stderr: "ebb submit: --wrap takes no script nor arguments after it (extra); put them in its command\n" });
  });

  test("the batch shell and srun's ranks see the job's and the step's SLURM_* values, as under Slurm", async () => {
    const { id } = await submit("env.sh", [
      "#!/bin/bash",
      "#SBATCH -N 2",
      "#SBATCH --ntasks-per-node=2",
      "#SBATCH -J envprobe",
      "#SBATCH -o env-%j.out",
      'echo "batch: $SLURM_JOB_ID $SLURM_JOBID $SLURM_JOB_NAME $SLURM_JOB_NODELIST $SLURM_JOB_NUM_NODES $SLURM_NTASKS $SLURM_TASKS_PER_NODE $SLURMD_NODENAME $SLURM_PROCID $SLURM_SUBMIT_DIR"',
      "srun -l bash -c 'echo \"$SLURM_STEP_ID $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURM_NNODES $SLURM_NTASKS $SLURM_STEP_TASKS_PER_NODE $SLURMD_NODENAME $SLURM_JOB_NAME\"' | sort",
      "srun -n 1 -J one bash -c 'echo \"one: $SLURM_STEP_ID $SLURM_NTASKS $SLURM_NNODES $SLURM_STEP_NODELIST $SLURM_NODELIST $SLURM_JOB_NAME\"'",
    ]);
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    const [first, second] = job.allocation as string[];
    const list = compressHostlist([first!, second!]);
    expect(c.read(`env-${id}.out`).split("\n")).toEqual([
      `batch: ${id} ${id} envprobe ${list} 2 4 2(x2) ${first} 0 ${c.dir}`,
      `0: 0 0 0 0 2 4 2(x2) ${first} envprobe`,
      `1: 0 1 1 0 2 4 2(x2) ${first} envprobe`,
      `2: 0 2 0 1 2 4 2(x2) ${second} envprobe`,
      `3: 0 3 1 1 2 4 2(x2) ${second} envprobe`,
      // srun -n 1 in a job of 2 nodes: one node, said as Slurm 22.05's srun says it.
      "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1",
      `one: 1 1 1 ${first} ${list} one`,
      "",
    ]);
  });

  test("#SBATCH --chdir DIR: the script and its steps run there, and SLURM_SUBMIT_DIR is still where sbatch ran, as Slurm's", async () => {
    // The idiom of a public array script (`#SBATCH --chdir /path` and `-o /path/slurms/output.%a.out`);
    // Slurm 22.05 side by side: pwd is the --chdir directory, SLURM_SUBMIT_DIR sbatch's own.
    mkdirSync(join(c.dir, "chdir-work"), { recursive: true });
    const { id } = await submit("chdir.sh", [
      "#!/bin/bash",
      "#SBATCH --chdir chdir-work",
      "#SBATCH -o chdir-%j.out",
      'echo "batch: $(pwd) $SLURM_SUBMIT_DIR $EBB_SUBMIT_DIR"',
      "srun bash -c 'echo \"step: $(pwd) $SLURM_SUBMIT_DIR\"'",
    ]);
    expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    const work = join(c.dir, "chdir-work");
    expect(c.read(`chdir-work/chdir-${id}.out`)).toBe(`batch: ${work} ${c.dir} ${c.dir}\nstep: ${work} ${c.dir}\n`);
  });

  test("sbatch --overcommit -n 8 on one node: one CPU, SLURM_OVERCOMMIT=1, and srun's steps of 2 and 8 tasks run there, as Slurm's", async () => {
    // Slurm 22.05 side by side: "cpus 1 tasks 8 overcommit 1" and every srun exits 0 (srun reads SLURM_OVERCOMMIT as -O).
    const { id } = await submit("overcommit.sh", [
      "#!/bin/bash",
      "#SBATCH -N 1",
      "#SBATCH -n 8",
      "#SBATCH --overcommit",
      "#SBATCH -o overcommit-%j.out",
      'echo "cpus $SLURM_JOB_CPUS_PER_NODE tasks $SLURM_NTASKS overcommit ${SLURM_OVERCOMMIT:-unset}"',
      'for n in 2 8; do echo "srun -n $n: $(srun -n $n echo x | wc -l) tasks"; done',
    ]);
    expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    expect(c.read(`overcommit-${id}.out`)).toBe("cpus 1 tasks 8 overcommit 1\nsrun -n 2: 2 tasks\nsrun -n 8: 8 tasks\n");
  });
});

describe("srun and exit statuses", () => {
  test("srun's exit status is the step's: a set -e script fails with it, and the job's exit code is the script's", async () => {
    const { id } = await submit("fail.sh", ["#!/bin/bash", "#SBATCH -N 2", "#SBATCH -o fail-%j.out", "set -e", "echo before", "srun bash -c 'exit 3'", "echo never"]);
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect({ state: job.state, exitCode: job.exitCode }).toEqual({ state: "FAILED", exitCode: 3 });
    expect(c.read(`fail-${id}.out`)).not.toContain("never");
  });

  test("a failed rank leaves the others running (srun's default) and srun exits with the highest code; -K kills them", async () => {
    const { id } = await submit("ranks.sh", [
      "#!/bin/bash",
      "#SBATCH -N 2",
      "#SBATCH -o ranks-%j.out",
      "srun -n 2 bash -c 'if [ $SLURM_PROCID = 1 ]; then exit 5; fi; sleep 1; echo rank 0 went on' 2>/dev/null",
      'echo "srun: $?"',
      "srun -K -n 2 bash -c 'if [ $SLURM_PROCID = 1 ]; then exit 5; fi; sleep 5; echo rank 0 went on' 2>/dev/null",
      'echo "srun -K: $?"',
    ]);
    expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    expect(c.read(`ranks-${id}.out`)).toBe("rank 0 went on\nsrun: 5\nsrun -K: 5\n");
  });

  test("sbatch, squeue and scancel in a script act on ebb's cluster, whatever Slurm SLURM_CONF names: a chained job (--dependency=afterok:$SLURM_JOB_ID), listed, then cancelled", async () => {
    const { id } = await submit("chain.sh", [
      "#!/bin/bash",
      "#SBATCH -o chain-%j.out",
      "export SLURM_CONF=/nonexistent/slurm.conf",
      'next=$(sbatch --parsable --dependency=afterok:$SLURM_JOB_ID --wrap "echo chained")',
      'echo "next $next"',
      'squeue -h -j "$SLURM_JOB_ID,$next" -o "%i %j %t %E"',
      "scancel $next",
      'echo "scancel $?"',
    ]);
    await c.waitJob(id, ["COMPLETED"]);
    expect(c.read(`chain-${id}.out`)).toBe(`next ${id + 1}\n${id} chain.sh R (null)\n${id + 1} wrap PD afterok:${id}\nscancel 0\n`);
    expect((await c.job(id + 1)).state).toBe("CANCELLED");
  });

  test("ebb sbatch is sbatch: -A and --qos left out with a warning, --deadline refused; --wrap writes slurm-%j.out, #SBATCH --parsable prints the id alone; in the job sacct's NCPUS and ReqTRES, squeue -r a line per pending array task", async () => {
    // sbatch's flags ebb does not have take the fates of #SBATCH lines' on its command line too.
    const held = await c.ebb(["sbatch", "-A", "acct", "--qos=normal", "--parsable", "-H", "--array=1-3", "--wrap", "true"]);
    expect(held.stderr).toBe("ebb submit: warning: ignoring sbatch flags ebb does not have: -A acct (command line: ebb keeps no accounts), --qos=normal (command line: ebb has no QOS)\n");
    expect((await c.ebb(["sbatch", "--deadline=now+1hour", "--wrap", "true"])).stderr).toBe("ebb submit: --deadline=now+1hour: ebb has no deadlines; a job ends at its --time\n");
    const array = Number(held.stdout);
    writeFileSync(join(c.dir, "parsable.sh"), "#!/bin/sh\n#SBATCH --parsable\ntrue\n");
    expect((await c.ebb(["sbatch", "parsable.sh"])).stdout).toBe(`${array + 3}\n`);
    const r = await c.ebb(["sbatch", "--wait", "-c", "2", "--mem=100M", "--wrap", `sacct -X -n -P -j $SLURM_JOB_ID --format=JobID,NCPUS,ReqTRES; squeue -h -r -j ${array} -o %i; squeue -h -j ${array} -o %i`]);
    const id = Number(/Submitted batch job (\d+)/.exec(r.stdout)?.[1]);
    expect(c.read(`slurm-${id}.out`)).toBe(`${id}|2|billing=2,cpu=2,mem=100M,node=1\n${array}_1\n${array}_2\n${array}_3\n${array}_[1-3]\n`);
    await c.ebb(["cancel", String(array)]);
  });

  test("salloc -N2 -n3 CMD: CMD here with the allocation's SLURM_* values, srun's steps in it, salloc's status and the job's exit code CMD's; sacct lists the steps (srun -J's name; not an ID.batch; none with -X); unknown flags and sbatch's -o refused", async () => {
    const cmd = [
      'echo "$SLURM_JOB_NAME $SLURM_NNODES $SLURM_NTASKS $SLURM_TASKS_PER_NODE $SLURM_JOB_CPUS_PER_NODE ${SLURMD_NODENAME-none} $SLURM_CLUSTER_NAME"',
      "srun -l sh -c 'echo $SLURMD_NODENAME' | sort",
      "srun -n1 -J check false",
      "sacct -n -P -j $SLURM_JOB_ID --format=JobID,JobName,State,ExitCode",
      "sacct -X -n -P -j $SLURM_JOB_ID --format=JobID,State",
      "exit 3",
    ].join("; ");
    const r = await c.ebb(["salloc", "-N2", "-n3", "sh", "-c", cmd]);
    const id = Number(/salloc: Granted job allocation (\d+)/.exec(r.stderr)?.[1]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`salloc: Relinquishing job allocation ${id}\n`);
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    const [a, b] = job.allocation as string[];
    // 2-CPU nodes: the first takes 2 tasks, leaving one for the second, as cons_tres lays them out.
    expect(r.stdout).toBe(`interactive 2 3 2,1 2,1 none ebb\n0: ${a}\n1: ${a}\n2: ${b}\n${id}|interactive|RUNNING|0:0\n${id}.0|sh|COMPLETED|0:0\n${id}.1|check|FAILED|1:0\n${id}|RUNNING\n`);
    // The job keeps the command's code, as Slurm 22.05's salloc job does (ExitCode=3:0).
    expect([job.state, job.exitCode]).toEqual(["FAILED", 3]);
    expect(await c.ebb(["salloc", "--bogus", "true"])).toMatchObject({ code: 2, stderr: "ebb salloc: unknown flag --bogus: neither sbatch nor ebb has it\n" });
    expect(await c.ebb(["salloc", "-o", "x.out", "true"])).toMatchObject({ code: 2, stderr: "ebb salloc: -o: salloc has no such flag (sbatch's, for a batch script's files, arrays and requeues)\n" });
  });

  test("a traced job that requeues itself (#!/bin/bash -x; scontrol requeue $SLURM_JOB_ID after srun exits 9; --open-mode=append): its two runs' lines as Slurm 22.05 wrote them, and no line of ebb's own", async () => {
    const { id } = await submit("requeue.sh", [
      "#!/bin/bash -x",
      "#SBATCH --open-mode=append",
      "#SBATCH -o requeue-%j.out",
      'if [ -n "$SLURM_RESTART_COUNT" ]; then',
      '    echo "restart count $SLURM_RESTART_COUNT"',
      "    exit 0",
      "fi",
      "srun bash -c 'exit 9'",
      'if [ "$?" == "9" ]; then',
      '    echo "requeueing"',
      "    scontrol requeue $SLURM_JOB_ID",
      "fi",
    ]);
    expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    // Slurm 22.05's file for the same script, srun's own line too.
    const text = c.read(`requeue-${id}.out`).split("\n");
    expect(text).toEqual(["+ '[' -n '' ']'", "+ srun bash -c 'exit 9'", "srun: error: n1: task 0: Exited with exit code 9", "+ '[' 9 == 9 ']'", "+ echo requeueing", "requeueing", `+ scontrol requeue ${id}`, "+ '[' -n 1 ']'", "+ echo 'restart count 1'", "restart count 1", "+ exit 0", ""]);
    expect((await c.ebb(["scontrol", "requeue", String(id)])).stderr).toBe(`scontrol: error: requeue ${id}: job ${id} is COMPLETED; only a running batch job can be requeued\n`);
  });

  test("the packing idiom: one-task steps started with srun --exact ... & run side by side, and wait collects them", async () => {
    const { id } = await submit("pack.sh", [
      "#!/bin/bash",
      "#SBATCH -n 4",
      "#SBATCH -o pack-%j.out",
      "for i in 1 2 3 4; do srun -n 1 -N 1 --exact bash -c \"sleep 1; echo task $i\" & done",
      "wait",
      'echo "waited $?"',
    ]);
    expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    expect(c.read(`pack-${id}.out`).split("\n").sort()).toEqual(["", "task 1", "task 2", "task 3", "task 4", "waited 0"]);
  });

  test("scontrol show job $SLURM_JOB_ID prints the job as scontrol does, for the scripts that log it or pick a field of it", async () => {
    const { id } = await submit(
      "showjob.sh",
      ["#!/bin/bash", "#SBATCH -n 2 -t 5 -J shown", "#SBATCH -o showjob-%j.out", "set -e", "scontrol show job $SLURM_JOB_ID", "scontrol show job | grep -o 'StdOut=[^ ]*'"],
      [],
      ["two words"],
    );
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    const text = c.read(`showjob-${id}.out`);
    const node = (job.allocation as string[])[0]!;
    for (const line of [
      `JobId=${id} JobName=shown\n`,
      "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n",
      "   JobState=RUNNING Reason=None Dependency=(null)\n",
      "TimeLimit=00:05:00 TimeMin=N/A\n",
      "   Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n",
      "   Partition=all AllocNode:Sid=",
      `   NodeList=${node}\n   BatchHost=${node}\n   NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n`,
      "   Command='two words'\n",
      `   WorkDir=${c.dir}\n`,
      `StdOut=${c.dir}/showjob-${id}.out\n   Power=\n   \n\n`,
    ])
      expect(text).toContain(line);
    expect(text).toEndWith(`\nStdOut=${c.dir}/showjob-${id}.out\n`);
  });

  test("sbatch reads SBATCH_* as its flags, over #SBATCH lines and under the command line; SLURM_NTASKS is not one (Slurm 22.05 side by side)", async () => {
    writeFileSync(join(c.dir, "envs.sh"), "#!/bin/sh\n#SBATCH -t 11\n#SBATCH -o /dev/null\ntrue\n");
    const env = { SBATCH_TIMELIMIT: "7", SBATCH_JOB_NAME: "fromenv", SLURM_NTASKS: "3", SBATCH_ACCOUNT: "proj" };
    const fromEnv = await c.ebb(["sbatch", "--parsable", "envs.sh"], { env });
    const fromLine = await c.ebb(["sbatch", "--parsable", "-t", "9", "envs.sh"], { env });
    expect(fromEnv.stderr).toContain("--account=proj (SBATCH_ACCOUNT: ");
    const shown = async (r: { stdout: string }) => JSON.parse((await c.ebb(["show", r.stdout.trim(), "--json"])).stdout);
    expect([await shown(fromEnv), await shown(fromLine)].map((j) => [j.name, j.timeLimit, j.tasks])).toEqual([["fromenv", 420, null], ["fromenv", 540, null]]);
  });

  test("scontrol update: a pending job's TimeLimit, JobName, Dependency, NumNodes; a running job lowers its own limit, never raises it, its NumNodes shrinks it (never grows it); other keys refused", async () => {
    const held = (await c.ebb(["sbatch", "--parsable", "-H", "-t", "10", "-o", "/dev/null", "--wrap", "true"])).stdout.trim();
    const r = await c.ebb(["scontrol", "update", `jobid=${held}`, "TimeLimit=5", "Name=renamed", "Dependency=singleton"]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
    const j = JSON.parse((await c.ebb(["show", held, "--json"])).stdout);
    expect([j.name, j.timeLimit, j.dependency]).toEqual(["renamed", 300, "singleton"]);
    await c.ebb(["cancel", held]);
    // NumNodes=: above the job's maximum refused, as Slurm's ("Node count specification invalid"); MIN-MAX sets both; Partition= without partitions refused.
    const small = (await c.ebb(["sbatch", "--parsable", "-H", "-o", "nodes-%j.out", "--wrap", "echo $SLURM_JOB_NUM_NODES $SLURM_TASKS_PER_NODE"])).stdout.trim();
    expect((await c.ebb(["scontrol", "update", `JobId=${small}`, "NumNodes=2"])).stderr).toContain("node count 2 is above the job's maximum 1");
    expect((await c.ebb(["scontrol", "update", `JobId=${small}`, "Partition=other"])).stderr).toContain("partition other does not exist");
    expect((await c.ebb(["scontrol", "update", `JobId=${small}`, "NumNodes=9-9"])).stderr).toContain("9 nodes requested but the cluster has 3");
    expect((await c.ebb(["scontrol", "update", `JobId=${small}`, "NumNodes=2-2"])).code).toBe(0);
    expect((await c.ebb(["release", small])).code).toBe(0);
    await c.waitJob(Number(small), ["COMPLETED"]);
    expect(c.read(`nodes-${small}.out`)).toBe("2 1(x2)\n");
    const { id } = await submit("update.sh", [
      "#!/bin/bash",
      "#SBATCH -t 10 -N 2 -o update-%j.out",
      "scontrol update JobId=$SLURM_JOB_ID TimeLimit=+10 || echo raise refused",
      "scontrol update JobId=$SLURM_JOB_ID NumNodes=3 2>&1 | sed 's/^/grow: /'",
      "scontrol update JobId=$SLURM_JOB_ID NumNodes=1",
      ". ./slurm_job_${SLURM_JOB_ID}_resize.sh",
      'echo "shrunk: $SLURM_JOB_NUM_NODES node ($SLURM_JOB_NODELIST, $SLURM_JOB_CPUS_PER_NODE CPUs), ${SLURM_NTASKS-no} task count, srun runs $(srun hostname | wc -l)"',
      "scontrol update JobId=$SLURM_JOB_ID TimeLimit=-3 JobName=lowered",
      "scontrol show job | grep -o -e 'TimeLimit=[^ ]*' -e 'JobName=[^ ]*' -e 'NumNodes=[^ ]*'",
    ]);
    await c.waitJob(id, ["COMPLETED"]);
    const out = c.read(`update-${id}.out`);
    const first = (await c.job(id)).allocation[0];
    expect(out).toContain("only an admin raises a job's time limit");
    // As Slurm's: a running job shrinks (its last nodes go), with slurm_job_ID_resize.sh for its variables; it never grows.
    expect(out).toContain(`\nraise refused\ngrow: scontrol: error: update JobId=${id}: job ${id} is RUNNING on 2 nodes; a running job's NumNodes= only shrinks it (to fewer than 2), as Slurm's\n`);
    expect(out).toContain(`\nTo reset Slurm environment variables, execute\n  For bash or sh shells:  . ./slurm_job_${id}_resize.sh\n  For csh shells:         source ./slurm_job_${id}_resize.csh\n`);
    expect(out).toContain(`\nshrunk: 1 node (${first}, 1 CPUs), no task count, srun runs 1\n`);
    expect(out).toEndWith("\nJobName=lowered\nTimeLimit=00:07:00\nNumNodes=1\n");
  });

  test("srun refuses what it cannot do, with the reason, and the script sees the failure", async () => {
    const { id } = await submit("refused.sh", ["#!/bin/bash", "#SBATCH -o refused-%j.out", "srun --mpi=pmix hostname", 'echo "srun: $?"']);
    await c.waitJob(id, ["COMPLETED"]);
    expect(c.read(`refused-${id}.out`)).toBe("srun: error: --mpi=pmix: ebb serves PMI-1 and PMI-2, not PMIx; MPICH and Intel MPI use PMI-2 (--mpi=pmi2)\nsrun: 2\n");
  });
});

describe("--signal, --open-mode, --requeue", () => {
  test("--signal=B:USR1@N reaches the batch shell N seconds before the limit (not its steps); --signal=USR2@N the steps (not the shell)", async () => {
    const batch = await submit("sigb.sh", [
      "#!/bin/bash",
      "#SBATCH -t 1",
      "#SBATCH --signal=B:USR1@57",
      "#SBATCH -o sigb-%j.out",
      "trap 'echo shell got USR1; exit 0' USR1",
      "srun bash -c 'trap \"echo step got USR1; exit 0\" USR1; sleep 30 & wait' &",
      "wait",
    ]);
    const steps = await submit("sigs.sh", [
      "#!/bin/bash",
      "#SBATCH -t 1",
      "#SBATCH --signal=USR2@57",
      "#SBATCH -o sigs-%j.out",
      "trap 'echo shell got USR2' USR2",
      "srun bash -c 'trap \"echo step got USR2; exit 0\" USR2; sleep 30 & wait'",
      'echo "srun: $?"',
    ]);
    expect((await c.waitJob(batch.id, ["COMPLETED", "FAILED", "TIMEOUT"])).state).toBe("COMPLETED");
    expect((await c.waitJob(steps.id, ["COMPLETED", "FAILED", "TIMEOUT"])).state).toBe("COMPLETED");
    expect(c.read(`sigb-${batch.id}.out`)).toBe("shell got USR1\n");
    expect(c.read(`sigs-${steps.id}.out`)).toBe("step got USR2\nsrun: 0\n");
    expect((await c.job(batch.id)).events.map((e: { kind: string; message: string }) => e.kind)).toContain("signal");
  });

  test("--requeue: a job whose node fails starts again (SLURM_RESTART_COUNT=1) with its arguments, appending to its output with --open-mode=append", async () => {
    const { id } = await submit("requeue.sh", [
      "#!/bin/bash",
      "#SBATCH -N 2",
      "#SBATCH --requeue",
      "#SBATCH --open-mode=append",
      "#SBATCH -o requeue-%j.out",
      'echo "run ${SLURM_RESTART_COUNT:-0} $1"',
      // The second run outlives the kill wait (2 s): the first run's KILL, sent then, is not for it.
      '[ -n "$SLURM_RESTART_COUNT" ] && { sleep 3; exit 0; }',
      // A process of the first run outside its process group: only its cgroup's kill ends it, and
      // the second run must not start in that killed cgroup (the kernel kills what is cloned into it).
      "setsid sleep 60 &",
      "sleep 60",
    ], [], ["ckpt"]);
    const running = await c.waitJob(id, ["RUNNING"]);
    await waitFor("the first run's output", () => c.read(`requeue-${id}.out`) === "run 0 ckpt\n");
    const job = await withNodeLost((running.allocation as string[])[1]!, () => c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL"], 60_000));
    expect(job.state).toBe("COMPLETED");
    expect(c.read(`requeue-${id}.out`)).toBe("run 0 ckpt\nrun 1 ckpt\n");
    expect(job.events.map((e: { kind: string; message: string }) => [e.kind, e.message]).filter(([k]: string[]) => k === "requeued")).toEqual([
      ["requeued", `requeued: node ${(running.allocation as string[])[1]} stopped responding; it starts again from its beginning (--requeue)`],
    ]);
  }, 120_000);

  test("without --requeue the same failure ends the job NODE_FAIL, and a truncating output holds only its run", async () => {
    const { id } = await submit("norequeue.sh", ["#!/bin/bash", "#SBATCH -N 2", "#SBATCH -o norequeue-%j.out", "echo run", "sleep 60"]);
    const running = await c.waitJob(id, ["RUNNING"]);
    await waitFor("the run's output", () => c.read(`norequeue-${id}.out`) === "run\n");
    const job = await withNodeLost((running.allocation as string[])[1]!, () => c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL"], 60_000));
    expect(job.state).toBe("NODE_FAIL");
    expect(c.read(`norequeue-${id}.out`)).toBe("run\n");
  }, 120_000);
});

describe("#SBATCH flags", () => {
  test("a flag that would change the job and that ebb does not have is refused with its reason; --mail-type is accepted with a warning", async () => {
    writeFileSync(join(c.dir, "deadline.sh"), "#!/bin/bash\n#SBATCH --deadline=now+1hour\necho\n");
    const r = await c.ebb(["submit", "deadline.sh"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: "ebb submit: deadline.sh line 2: #SBATCH --deadline=now+1hour: --deadline=now+1hour: ebb has no deadlines; a job ends at its --time\n" });
    const mail = await submit("mail.sh", ["#!/bin/bash", "#SBATCH --mail-type=END,FAIL", "#SBATCH --mail-user=me@example.org", "#SBATCH -o mail-%j.out", "echo ok"]);
    expect(mail.stderr).toBe("ebb submit: warning: ebb sends no mail; --mail-type=END,FAIL and --mail-user=me@example.org ignored (ebb wait ID, or ebb submit --wait, tells when a job ends)\n");
    expect((await c.waitJob(mail.id, ["COMPLETED"])).state).toBe("COMPLETED");
  });
});
