/**
 * Slurm's variables as ebb sets them, against what Slurm 22.05 set in the same places (a batch
 * shell and srun's ranks of a 2-node job, recorded on the loopback cluster of test/support/slurm.ts),
 * and the --signal spec.
 */
import { describe, expect, test } from "bun:test";
import { perNode, SLURM_JOB_VARS, slurmBatchVars, slurmGpuVars, slurmJobVars, slurmRankVars } from "../../src/roles/slurm-env.ts";
import { parseSignalSpec } from "../../src/domain/job-options.ts";

describe("Slurm's forms", () => {
  test("a count per node, run-length coded", () => {
    expect([[2, 2, 2, 1], [1], [2, 2], [3, 1, 1, 3]].map(perNode)).toEqual(["2(x3),1", "1", "2(x2)", "3,1(x2),3"]);
  });
});

describe("the variables of a job, a batch shell and a rank", () => {
  const root = { user: "root", uid: 0, gid: 0 };
  const job = { id: 1, name: "envprobe", nodes: ["n2", "n1"], tasks: [2, 2], tasksGiven: true, tasksPerNode: 2, cpus: [2, 2], submitDir: "/tmp/i31s", cluster: "ebbtest", partition: "debug" };

  test("a 2-node job with --ntasks-per-node=2, as sbatch -N 2 --ntasks-per-node=2 -J envprobe set them", () => {
    expect(slurmJobVars(job)).toEqual({
      SLURM_JOB_ID: "1",
      SLURM_JOBID: "1",
      SLURM_JOB_NAME: "envprobe",
      SLURM_JOB_NODELIST: "n[1-2]",
      SLURM_NODELIST: "n[1-2]",
      SLURM_JOB_NUM_NODES: "2",
      SLURM_NNODES: "2",
      SLURM_JOB_CPUS_PER_NODE: "2(x2)",
      SLURM_TASKS_PER_NODE: "2(x2)",
      SLURM_NTASKS: "4",
      SLURM_NPROCS: "4",
      SLURM_NTASKS_PER_NODE: "2",
      SLURM_SUBMIT_DIR: "/tmp/i31s",
      SLURM_JOB_PARTITION: "debug",
      SLURM_CLUSTER_NAME: "ebbtest",
    });
    // -n 3 --ntasks-per-node=2: the count per node on each node, the job's 3 tasks (Slurm 22.05 side by side).
    expect(slurmJobVars({ ...job, tasks: [2, 1] })).toMatchObject({ SLURM_TASKS_PER_NODE: "2(x2)", SLURM_NTASKS: "3", SLURM_NTASKS_PER_NODE: "2" });
    expect(slurmBatchVars("n1", 2, root)).toEqual({ SLURMD_NODENAME: "n1", SLURM_CPUS_ON_NODE: "2", SLURM_PROCID: "0", SLURM_LOCALID: "0", SLURM_NODEID: "0", SLURM_GTIDS: "0", SLURM_JOB_USER: "root", SLURM_JOB_UID: "0", SLURM_JOB_GID: "0" });
  });

  test("without -n or --ntasks-per-node there is no SLURM_NTASKS, and SLURM_TASKS_PER_NODE counts CPUs; an array task has SLURM_ARRAY_*", () => {
    const vars = slurmJobVars({ ...job, nodes: ["n2"], tasks: [1], tasksGiven: false, tasksPerNode: null, cpus: [2], id: 4, array: { jobId: 2, taskId: 3, count: 3, min: 1, max: 5, step: 2 } });
    expect(Object.keys(vars).filter((k) => /NTASKS|NPROCS/.test(k))).toEqual([]);
    expect(vars).toMatchObject({ SLURM_JOB_ID: "4", SLURM_TASKS_PER_NODE: "2", SLURM_ARRAY_JOB_ID: "2", SLURM_ARRAY_TASK_ID: "3", SLURM_ARRAY_TASK_COUNT: "3", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "5", SLURM_ARRAY_TASK_STEP: "2" });
  });

  test("what the job asked for, as sbatch sets it: -c, --mem-per-cpu, --gpus-per-node; -c without -n counts tasks of its CPUs; GPUs on a node", () => {
    const request = { tasks: 2, cpusPerTask: 4, memPerCpuMiB: 1024, gpusPerNode: 2, gpuType: "a100", exclusive: false };
    const vars = slurmJobVars({ ...job, nodes: ["n1"], tasks: [2], tasksGiven: false, tasksPerNode: null, cpus: [8], request });
    expect(Object.fromEntries(Object.entries(vars).filter(([k]) => /CPUS|MEM|GPUS|TASKS_PER_NODE/.test(k)))).toEqual({
      SLURM_JOB_CPUS_PER_NODE: "8",
      SLURM_TASKS_PER_NODE: "2",
      SLURM_CPUS_PER_TASK: "4",
      SLURM_MEM_PER_CPU: "1024",
      SLURM_GPUS_PER_NODE: "a100:2",
    });
    // A whole-node job (no request) or one core per task by default: none of them; -c 1 given: SLURM_CPUS_PER_TASK=1, as sbatch -c 1.
    expect(Object.keys(slurmJobVars(job)).filter((k) => /PER_TASK|MEM|GPUS/.test(k))).toEqual([]);
    expect(Object.keys(slurmJobVars({ ...job, request: { tasks: 1, cpusPerTask: 1, exclusive: false } })).filter((k) => /PER_TASK/.test(k))).toEqual([]);
    expect(slurmJobVars({ ...job, request: { tasks: 1, cpusPerTask: 1, cpusPerTaskSet: true, exclusive: false } }).SLURM_CPUS_PER_TASK).toBe("1");
    expect([slurmGpuVars([1, 3]), slurmGpuVars([])]).toEqual([{ SLURM_JOB_GPUS: "1,3", SLURM_GPUS_ON_NODE: "2" }, {}]);
  });

  test("rank 3 of `srun -l` in that job, and the one rank of `srun -n 1` (step 1)", () => {
    expect(slurmRankVars({ stepId: 0, nodes: ["n1", "n2"], tasks: [2, 2], nodeIndex: 1, localId: 1, rank: 3, size: 4, cpusOnNode: 2, owner: root })).toEqual({
      SLURM_STEP_ID: "0",
      SLURM_STEPID: "0",
      SLURM_STEP_NODELIST: "n[1-2]",
      SLURM_STEP_NUM_NODES: "2",
      SLURM_STEP_NUM_TASKS: "4",
      SLURM_STEP_TASKS_PER_NODE: "2(x2)",
      SLURM_NNODES: "2",
      SLURM_NTASKS: "4",
      SLURM_NPROCS: "4",
      SLURM_TASKS_PER_NODE: "2(x2)",
      SLURM_PROCID: "3",
      SLURM_LOCALID: "1",
      SLURM_NODEID: "1",
      SLURM_DISTRIBUTION: "block",
      SLURM_GTIDS: "2,3",
      SLURMD_NODENAME: "n2",
      SLURM_CPUS_ON_NODE: "2",
      SLURM_JOB_USER: "root",
      SLURM_JOB_UID: "0",
      SLURM_JOB_GID: "0",
    });
    expect(slurmRankVars({ stepId: 1, nodes: ["n1"], tasks: [1], nodeIndex: 0, localId: 0, rank: 0, size: 1, cpusOnNode: 2, owner: root })).toMatchObject({
      SLURM_STEP_ID: "1",
      SLURM_STEP_NODELIST: "n1",
      SLURM_NNODES: "1",
      SLURM_NTASKS: "1",
      SLURM_TASKS_PER_NODE: "1",
      SLURM_GTIDS: "0",
      // srun's own choice without -m: cyclic for a task or fewer per node.
      SLURM_DISTRIBUTION: "cyclic",
    });
    // srun -m cyclic: rank 3 of 4 on 2 nodes is node 1's second, beside rank 1.
    expect(slurmRankVars({ stepId: 0, nodes: ["n1", "n2"], tasks: [2, 2], ranksHere: [1, 3], nodeIndex: 1, localId: 1, rank: 3, size: 4, cpusOnNode: 2, owner: root })).toMatchObject({ SLURM_PROCID: "3", SLURM_LOCALID: "1", SLURM_NODEID: "1", SLURM_GTIDS: "1,3", SLURM_TASKS_PER_NODE: "2(x2)" });
    // A rank of a GPU job sees the step's GPUs there, as srun's ranks do; none without.
    expect(slurmRankVars({ stepId: 1, nodes: ["n1"], tasks: [1], nodeIndex: 0, localId: 0, rank: 0, size: 1, cpusOnNode: 2, gpus: [1, 3], owner: root }).SLURM_STEP_GPUS).toBe("1,3");
    expect(slurmRankVars({ stepId: 1, nodes: ["n1"], tasks: [1], nodeIndex: 0, localId: 0, rank: 0, size: 1, cpusOnNode: 2, gpus: [], owner: root })).not.toHaveProperty("SLURM_STEP_GPUS");
  });

  test("every variable ebb sets is one a job's processes do not hand on", () => {
    const all = { ...slurmJobVars({ ...job, restarts: 1, array: { jobId: 1, taskId: 1, count: 1, min: 1, max: 1, step: 1 }, request: { cpusPerTask: 1, memPerNodeMiB: 1, memPerCpuMiB: 1, gpus: 1, gpusPerNode: 1, gpusPerTask: 1, exclusive: false } }), ...slurmGpuVars([0]), ...slurmBatchVars("n1", 2, root), ...slurmRankVars({ stepId: 0, nodes: ["n1"], tasks: [1], nodeIndex: 0, localId: 0, rank: 0, size: 1, cpusOnNode: 2, owner: root }) };
    expect(Object.keys(all).filter((k) => !SLURM_JOB_VARS.test(k))).toEqual([]);
    // What a step takes from the shell it was started in, as srun does: its input variables.
    expect(["SLURM_CPUS_PER_TASK", "SLURM_SUBMIT_HOST", "SLURM_CONF", "SLURM_EXPORT_ENV"].filter((k) => SLURM_JOB_VARS.test(k))).toEqual([]);
  });
});

describe("--signal", () => {
  test("[B:]SIG[@TIME] as sbatch takes it", () => {
    expect(parseSignalSpec("B:USR1@90")).toEqual({ signal: "SIGUSR1", seconds: 90, batchOnly: true });
    expect(parseSignalSpec("B:SIGUSR1@15")).toEqual({ signal: "SIGUSR1", seconds: 15, batchOnly: true });
    expect(parseSignalSpec("USR2")).toEqual({ signal: "SIGUSR2", seconds: 60, batchOnly: false });
    expect(parseSignalSpec("10@120")).toEqual({ signal: "SIGUSR1", seconds: 120, batchOnly: false });
    expect(parseSignalSpec("R:USR1@60")).toEqual({ error: '"R:" is not B: (the batch shell only); R: (a reservation\'s end) needs reservations, which ebb does not have' });
    for (const bad of ["", "B:", "FOO@10", "USR1@x", "USR1@99999", "B:USR1@"]) expect(parseSignalSpec(bad)).toHaveProperty("error");
  });
});
