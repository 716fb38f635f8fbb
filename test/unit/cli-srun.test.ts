/**
 * srun's command lines as ebb run's (cli/srun.ts), with srun's defaults inside a job as Slurm
 * 22.05 applied them (checked on the loopback cluster of test/support/slurm.ts): the job's task
 * counts from its environment, a failed rank that leaves the others running.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stepLimit } from "../../src/cli/run.ts";
import { srunToRun } from "../../src/cli/srun.ts";
import { slurmstepdExecLine, srunExecCode, SrunEnds, srunTaskEnd } from "../../src/roles/launcher/srun-words.ts";

const job = { EBB_JOB_ID: "7", EBB_JOB_NODELIST: "n1,n2" };
const run = (argv: string[], env: Record<string, string> = job) => srunToRun(argv, env);
const refusal = (argv: string[]) => {
  try {
    run(argv);
    return "accepted";
  } catch (e) {
    return (e as Error).message;
  }
};

describe("srun as ebb run", () => {
  test("the common flags, and the program with its own flags", () => {
    expect(run(["-n", "4", "-N2", "--ntasks-per-node=2", "-l", "-J", "inner", "-o", "out-%j-%s.txt", "-e", "err.txt", "--open-mode=append", "-D", "/tmp", "--mpi=pmi2", "./a.out", "-n", "3"]).run).toEqual([
      "--nodes=2",
      "--ntasks=4",
      "--tasks-per-node=2",
      "--label",
      "--job-name=inner",
      "--output=out-%j-%s.txt",
      "--error=err.txt",
      "--open-mode=append",
      "--chdir=/tmp",
      "--input=all",
      "--no-kill-on-bad-exit",
      "--say-ends=srun",
      "--",
      "./a.out",
      "-n",
      "3",
    ]);
  });

  test("inside a job of -N 2 --ntasks-per-node=2: srun runs 4 tasks, -n 3 three, -N 1 the job's 4 on one node, which its 2 CPUs there refuse (srun's defaults, Slurm 22.05 side by side)", () => {
    const env = { ...job, SLURM_NTASKS: "4", SLURM_NTASKS_PER_NODE: "2", SLURM_NNODES: "2" };
    const flags = (argv: string[], e: Record<string, string> = env) => run([...argv, "hostname"], e).run.filter((w) => /^--(nodes|ntasks|tasks-per-node)=/.test(w));
    expect(flags([])).toEqual(["--ntasks=4", "--tasks-per-node=2"]);
    expect(flags(["-n", "3"])).toEqual(["--ntasks=3"]);
    expect(flags(["-N", "1"])).toEqual(["--nodes=1", "--ntasks=4"]);
    expect(run(["-N", "1", "x"], env).warnings).toEqual(["can't honor --ntasks-per-node set to 2 which doesn't match the requested tasks 4 with the number of requested nodes 1. Ignoring --ntasks-per-node."]);
    const cpus = { ...env, SLURM_JOB_CPUS_PER_NODE: "2(x2)" };
    const refused = "error: Unable to create step for job 7: More processors requested than permitted";
    expect(() => run(["-N", "1", "x"], cpus)).toThrow(refused);
    expect(flags(["-N", "1", "-n", "2"], cpus)).toEqual(["--nodes=1", "--ntasks=2"]);
    // sbatch -N 3 -n 3 (a CPU on each node): srun -N 1 and -N 2 refused, -N 3 and -N 1 -n 1 run.
    const three = { EBB_JOB_ID: "7", EBB_JOB_NODELIST: "n1,n2,n3", SLURM_NTASKS: "3", SLURM_NNODES: "3", SLURM_JOB_CPUS_PER_NODE: "1(x3)" };
    expect(() => run(["-N", "1", "x"], three)).toThrow(refused);
    expect(() => run(["-N", "2", "x"], three)).toThrow(refused);
    expect(() => run(["-w", "n2", "-N", "1", "x"], three)).toThrow(refused);
    expect(flags(["-N", "3"], three)).toEqual(["--nodes=3", "--ntasks=3"]);
    expect(flags(["-N", "1", "-n", "1"], three)).toEqual(["--nodes=1", "--ntasks=1"]);
    expect(flags(["-N", "1", "-O"], three)).toEqual(["--nodes=1", "--ntasks=3"]);
    // -c counts: 2 tasks of 2 CPUs on one node of 2 are refused.
    expect(() => run(["-N", "1", "-n", "2", "-c", "2", "x"], cpus)).toThrow(refused);
  });

  test("--mpi=pmi2 and --mpi=none leave ebb serving PMI-1 and PMI-2: Slurm's pmi2 serves MPICH's PMI-1 as well", () => {
    expect(run(["--mpi=pmi2", "x"]).run).toEqual(["--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
    expect(run(["--mpi", "none", "x"]).run).toEqual(["--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
    expect(refusal(["--mpi=pmi1", "x"])).toBe("--mpi=pmi1: expected pmi2 or none");
  });

  test("Hydra's srun bootstrap (mpirun in a batch script): its --input none reaches ebb run", () => {
    const hydra = ["-N", "2", "-n", "2", "--input", "none", "/usr/bin/hydra_pmi_proxy", "--control-port", "vm:36825", "--proxy-id", "-1"];
    expect(run(hydra, { ...job, SLURM_NTASKS: "4", SLURM_NTASKS_PER_NODE: "2" })).toEqual({
      run: ["--nodes=2", "--ntasks=2", "--input=none", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "/usr/bin/hydra_pmi_proxy", "--control-port", "vm:36825", "--proxy-id", "-1"],
      warnings: [],
    });
    expect(run(["-i", "none", "x"]).run).toEqual(["--input=none", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
  });

  test("--ntasks-per-node that the task count (the job's too) outgrows on the step's nodes is left out with srun's warning", () => {
    const env = { ...job, SLURM_NTASKS: "4", SLURM_NTASKS_PER_NODE: "2", SLURM_NNODES: "2" };
    const ignored = "can't honor --ntasks-per-node set to 1 which doesn't match the requested tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node.";
    expect(run(["--ntasks-per-node=1", "x"], env)).toEqual({ run: ["--ntasks=4", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"], warnings: [ignored] });
    expect(run(["-n", "4", "--ntasks-per-node=1", "x"], env).warnings).toEqual([ignored]);
    expect(run(["-n", "2", "--ntasks-per-node=1", "x"], env)).toEqual({ run: ["--ntasks=2", "--tasks-per-node=1", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"], warnings: [] });
    // Fewer tasks than the count per node on every node (sbatch -n 3 --ntasks-per-node=2, 2 nodes): ignored too, with the warning (Slurm 22.05 side by side).
    const fewer = { ...job, SLURM_NTASKS: "3", SLURM_NTASKS_PER_NODE: "2", SLURM_NNODES: "2" };
    expect(run(["x"], fewer)).toEqual({
      run: ["--ntasks=3", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"],
      warnings: ["can't honor --ntasks-per-node set to 2 which doesn't match the requested tasks 3 with the number of requested nodes 2. Ignoring --ntasks-per-node."],
    });
  });

  test("-c gives the ranks SLURM_CPUS_PER_TASK; --kill-on-bad-exit / -K kill the others, as ebb run does by default", () => {
    expect(run(["-c", "2", "env"]).run).toContain("--export=ALL,SLURM_CPUS_PER_TASK=2");
    expect(run(["--export=NONE", "-c2", "env"]).run).toContain("--export=NONE,SLURM_CPUS_PER_TASK=2");
    // A job submitted with sbatch --export=NONE says so to its steps (SLURM_EXPORT_ENV); srun's own flag wins.
    expect(run(["env"], { ...job, SLURM_EXPORT_ENV: "NONE" }).run).toContain("--export=NONE");
    expect(run(["--export=ALL", "env"], { ...job, SLURM_EXPORT_ENV: "NONE" }).run).toContain("--export=ALL");
    expect(run(["-K", "x"]).run).toContain("--kill-on-bad-exit");
    expect(run(["--kill-on-bad-exit=0", "x"]).run).toContain("--no-kill-on-bad-exit");
  });

  test("--exact and --exclusive hold the step's CPUs (ebb run --exact, -c its CPUs per task), said in srun's words", () => {
    for (const f of ["--exact", "--exclusive"]) expect(run(["-n1", f, "x"]).run).toEqual(["--ntasks=1", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--exact", "--say-waits=srun", "--", "x"]);
    expect(run(["--exact", "-c", "2", "x"]).run).toContain("--cpus-per-task=2");
    expect(run(["-c", "2", "x"]).run).not.toContain("--cpus-per-task=2");
    // As Slurm 22.05's srun: --overlap wins over --exact, and refuses --exclusive.
    expect(run(["--exact", "--overlap", "x"]).run).not.toContain("--exact");
    expect(() => run(["--exclusive", "--overlap", "x"])).toThrow("--exclusive and --overlap are mutually exclusive");
    // -Q: srun says no wait (Slurm's info lines).
    expect(run(["-Q", "--exclusive", "x"]).run).toContain("--say-waits=none");
  });

  test("flags that change nothing here pass, some with a warning; --cpu-bind goes to ebb run where it has it", () => {
    expect(run(["--overlap", "-Q", "-m", "block", "--jobid=7", "-w", "n[1-2]", "x"])).toEqual({ run: ["--export=ALL,SLURM_DISTRIBUTION=block", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--nodelist=n1,n2", "--", "x"], warnings: [] });
    expect(run(["-u", "x"]).run).toContain("--unbuffered");
    expect(run(["-p", "debug", "--mem=0", "--gres=gpu:1", "--cpu-bind=cores", "x"]).warnings).toEqual([
      "-p debug is ignored: a step runs in its job's partition",
      "--mem=0 is ignored: a step runs with its job's resources",
      "--gres=gpu:1 is ignored: a step runs with its job's resources",
    ]);
    expect(run(["--cpu-bind=verbose,cores", "x"]).run).toContain("--cpu-bind=cores");
  });

  test("standard input: every task reads srun's (its default), or none (as Hydra's mpiexec asks, --input none), or one task", () => {
    expect(run(["x"]).run).toContain("--input=all");
    expect(run(["--input", "none", "x"]).run).toContain("--input=none");
    expect(run(["-i3", "x"]).run).toContain("--input=3");
  });

  test("-i FILE: each rank's shell opens the file (%t its rank's, %n/%N its node's), the name quoted, the program its arguments", () => {
    expect(run(["-i", "in-%t.txt", "x", "a b"]).run).toEqual(["--input=none", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "sh", "-c", `exec <'in-'"$SLURM_PROCID"'.txt' && exec "$@"`, "srun-input", "x", "a b"]);
    const dir = mkdtempSync(join(tmpdir(), "srun-input-"));
    try {
      writeFileSync(join(dir, "it's $HOME 2 n2.txt"), "rank 2's line\n");
      const argv = run(["--input=it's $HOME %t %N.txt", "cat"]).run;
      const r = Bun.spawnSync(argv.slice(argv.indexOf("--") + 1), { cwd: dir, env: { SLURM_PROCID: "2", SLURMD_NODENAME: "n2", PATH: process.env.PATH! } });
      expect([r.stdout.toString(), r.exitCode]).toEqual(["rank 2's line\n", 0]);
      const missing = Bun.spawnSync(argv.slice(argv.indexOf("--") + 1), { cwd: dir, env: { SLURM_PROCID: "3", SLURMD_NODENAME: "n2", PATH: process.env.PATH! } });
      expect([missing.stderr.toString().includes("it's $HOME 3 n2.txt"), missing.exitCode]).toEqual([true, 2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(refusal(["-i", "in-%q", "x"])).toBe("--input=in-%q: %q is no pattern of srun's file names here (%t, %n, %N, %j, %s, %J, %u, %x, %%)");
  });

  test("-t: the step's own limit, in ebb run's --time, whole minutes as Slurm keeps them; 0 is none", () => {
    expect(run(["-t", "5", "x"]).run).toEqual(["--time=5", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
    expect(stepLimit("5")).toEqual({ seconds: 300, why: "the step ran out of its time limit (5 min); killing all ranks", code: 143 });
    expect(stepLimit("0:30")?.seconds).toBe(60);
    expect(stepLimit("1:00:01")?.seconds).toBe(3660);
    expect([stepLimit("0"), stepLimit("UNLIMITED")]).toEqual([undefined, undefined]);
    expect(() => stepLimit("soon")).toThrow('--time: "soon" is not a duration');
  });

  test("-w naming the job's first node (ray's and torchrun's head node) passes: srun takes the list as nodes the step must have", () => {
    const env = { ...job, SLURM_NTASKS: "4", SLURM_NTASKS_PER_NODE: "2" };
    expect(run(["--nodes=1", "--ntasks=1", "-w", "n1", "hostname"], env).run).toEqual(["--nodes=1", "--ntasks=1", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--nodelist=n1", "--", "hostname"]);
    expect(run(["-w", "n1", "hostname"], env).run).toEqual(["--ntasks=4", "--tasks-per-node=2", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--nodelist=n1", "--", "hostname"]);
    // Any of the job's nodes (ray's worker loop: srun --nodes=1 --ntasks=1 -w "$node_i" ...).
    expect(run(["--nodes=1", "--ntasks=1", "-w", "n2", "hostname"], env).run).toContain("--nodelist=n2");
  });

  test("-r N and -x NODES (steps spread over the job's nodes, as task farms do): the step runs on those nodes, -N of them else all", () => {
    const four = { ...job, EBB_JOB_NODELIST: "n1,n2,n3,n4", SLURM_NTASKS: "4", SLURM_NNODES: "4" };
    expect(run(["-N1", "-n1", "-r", "2", "x"], four).run).toEqual(["--nodes=1", "--ntasks=1", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--nodelist=n3", "--", "x"]);
    expect(run(["--relative=1", "x"], four).run).toEqual(["--nodes=3", "--ntasks=4", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--nodelist=n2,n3,n4", "--", "x"]);
    expect(run(["-x", "n[1-2]", "-n", "2", "x"], four).run).toEqual(["--nodes=2", "--ntasks=2", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--nodelist=n3,n4", "--", "x"]);
    expect(run(["--exclude=n4", "-N", "1", "x"], four).run).toContain("--nodelist=n1");
    const refused = (argv: string[]) => {
      try {
        srunToRun(argv, four);
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refused(["-r", "4", "x"])).toBe("--relative=4: the job has 4 nodes (n1,n2,n3,n4), counted from 0");
    expect(refused(["-r", "3", "-N", "2", "x"])).toBe("--relative: 2 nodes asked for, 1 of the job's are there (n4)");
    expect(refused(["-x", "n[1-4]", "x"])).toBe("--exclude=n[1-4] leaves none of the job's nodes (n1,n2,n3,n4)");
    expect(refused(["-x", "n9", "x"])).toBe("--exclude=n9: n9 is not among the job's nodes (n1,n2,n3,n4)");
    expect(refused(["-w", "n1", "-r", "1", "x"])).toBe("give one of --nodelist, --relative and --exclude, not --nodelist and --relative");
  });

  test("--cpu-bind: ebb's own cores for the socket and locality-domain levels (said), no CPU lists or masks; harmless flags pass", () => {
    expect(run(["--cpu-bind=sockets", "x"])).toEqual({ run: ["--input=all", "--cpu-bind=cores", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"], warnings: ["--cpu-bind=sockets binds each rank to its own cores here"] });
    expect(refusal(["--cpu-bind=map_cpu:0,1", "x"])).toBe("--cpu-bind=map_cpu:0,1: ebb binds each rank to its own cores (cores) or not at all (none); it takes no CPU lists or masks");
    expect(run(["--send-libs=no", "--quit-on-interrupt", "x"]).warnings).toEqual([]);
    expect(refusal(["--send-libs=yes", "x"])).toBe("--send-libs=yes: ebb does not copy programs to the nodes");
  });

  test("-m: the node level to ebb run, srun's SLURM_DISTRIBUTION to the ranks; the job's (sbatch -m) by default", () => {
    expect(run(["-m", "cyclic", "x"]).run).toEqual(["--distribution=cyclic", "--export=ALL,SLURM_DISTRIBUTION=cyclic", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
    expect(run(["--distribution=block:cyclic", "x"])).toEqual({ run: ["--export=ALL,SLURM_DISTRIBUTION=block:cyclic", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"], warnings: ["--distribution=block:cyclic: the :cyclic level is ignored: ebb binds each rank of a node to its own consecutive cores (--cpu-bind=cores), without sockets"] });
    // A value with a comma goes by name, from srun's environment: --export's list cannot carry it.
    expect(run(["-m", "block:block:block,Pack", "x"])).toMatchObject({ run: ["--export=ALL,SLURM_DISTRIBUTION", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"], env: { SLURM_DISTRIBUTION: "block:block:block,pack" } });
    const fromJob = { ...job, SLURM_DISTRIBUTION: "plane", SLURM_DIST_PLANESIZE: "2" };
    expect(run(["x"], fromJob).run).toEqual(["--distribution=plane=2", "--export=ALL,SLURM_DISTRIBUTION=plane,SLURM_DIST_PLANESIZE=2", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
    expect(run(["-m", "block", "x"], fromJob).run).toEqual(["--export=ALL,SLURM_DISTRIBUTION=block", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
  });

  test("--ntasks-per-gpu: the ranks' binding, through SLURM_NTASKS_PER_GPU", () => {
    expect(run(["--ntasks-per-gpu=2", "x"]).run).toEqual(["--export=ALL,SLURM_NTASKS_PER_GPU=2", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"]);
    expect(refusal(["--ntasks-per-gpu=0", "x"])).toBe("--ntasks-per-gpu=0: expected a whole number of tasks");
  });

  test("-m arbitrary: a task on each name of -w's list (or SLURM_HOSTFILE's), as hyperqueue's srun -m arbitrary -w \"$SLURM_JOB_NODELIST\" runs a task per node", () => {
    const hostfile = join(mkdtempSync(join(tmpdir(), "ebb-hostfile-")), "hosts");
    writeFileSync(hostfile, "n1\nn1\nn2\nn2\n");
    try {
      const perNode = run(["-m", "arbitrary", "-w", "n[1-2]", "hostname"]).run;
      expect(perNode.slice(0, 3)).toEqual(["--nodes=2", "--ntasks=2", "--tasks-per-node=1"]);
      expect(perNode).toContain("--nodelist=n1,n2");
      expect(run(["-m", "arbitrary", "-n", "4", "hostname"], { ...job, SLURM_HOSTFILE: hostfile }).run.slice(0, 3)).toEqual(["--nodes=2", "--ntasks=4", "--tasks-per-node=2"]);
    } finally {
      rmSync(hostfile, { force: true });
    }
  });

  test("what would change the step and ebb cannot do is refused, with the reason", () => {
    expect(refusal(["--mpi=pmix", "x"])).toBe("--mpi=pmix: ebb serves PMI-1 and PMI-2, not PMIx; MPICH and Intel MPI use PMI-2 (--mpi=pmi2)");
    expect(refusal(["-m", "arbitrary", "x"])).toBe("--distribution=arbitrary: give the nodes, in SLURM_HOSTFILE or with -w, one name a task");
    expect(refusal(["-m", "arbitrary", "-w", "n2,n1", "x"])).toBe("--distribution=arbitrary: ebb numbers a step's ranks in blocks of one size over its nodes in the job's order (n1,n2); the list n2,n1 is another layout");
    expect(refusal(["--jobid=8", "x"])).toBe("--jobid=8: srun here runs steps of job 7 only");
    expect(refusal(["-w", "n[2-3]", "x"])).toBe("--nodelist=n[2-3]: n3 is not among the job's nodes (n1,n2)");
    expect(refusal(["-N", "1-2", "x"])).toBe("--nodes=1-2: a step takes a node count, not a range");
    // getopt's words, as srun prints them (after "srun: ", exit 255).
    expect(refusal(["--bogus=3", "x"])).toBe(`unrecognized option '--bogus=3'\nTry "srun --help" for more information`);
    expect(refusal(["-y", "x"])).toBe(`invalid option -- 'y'\nTry "srun --help" for more information`);
    expect(refusal(["-N", "3", "x"])).toBe("error: Only allocated 2 nodes asked for 3");
    expect(refusal(["-n", "2"])).toBe("fatal: No command given to execute.");
  });

  test("fewer tasks than nodes (-N's, else the job's) take as many nodes as tasks, with srun's warning (Slurm 22.05 side by side), on the nodes -r, -w or -x name", () => {
    const env = { EBB_JOB_ID: "7", EBB_JOB_NODELIST: "n1,n2,n3", SLURM_NNODES: "3", SLURM_NTASKS: "3" };
    const nodes = (argv: string[]) => run([...argv, "hostname"], env);
    expect(nodes(["-n", "1"])).toEqual({ run: ["--nodes=1", "--ntasks=1", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "hostname"], warnings: ["can't run 1 processes on 3 nodes, setting nnodes to 1"] });
    expect(nodes(["-N", "2", "-n", "1"]).warnings).toEqual(["can't run 1 processes on 2 nodes, setting nnodes to 1"]);
    expect(nodes(["-N", "2", "-n", "1"]).run).toContain("--nodes=1");
    expect(nodes(["-r", "1", "-n", "1"]).run).toContain("--nodelist=n2");
    expect(nodes(["-x", "n1", "-n", "2"]).run).toContain("--nodelist=n2,n3");
    expect(nodes(["-w", "n3", "-n", "1"]).warnings).toEqual(["can't run 1 processes on 3 nodes, setting nnodes to 1"]);
    expect(nodes(["-n", "3"]).warnings).toEqual([]);
    expect(nodes(["-N", "1"]).warnings).toEqual([]);
  });

  test("a count per node given to srun that the job's CPUs on a step node cannot hold is kept (the controller caps it there, as Slurm 22.05); more tasks than those CPUs are refused", () => {
    const env = { EBB_JOB_ID: "7", EBB_JOB_NODELIST: "n1,n2,n3,n4", SLURM_NNODES: "4", SLURM_NTASKS: "8", SLURM_JOB_CPUS_PER_NODE: "4,2,1(x2)" };
    expect(run(["-N", "4", "-n", "8", "--ntasks-per-node=2", "x"], env).run).toContain("--tasks-per-node=2");
    expect(run(["-N", "2", "-n", "4", "--ntasks-per-node=2", "x"], env).run).toContain("--tasks-per-node=2");
    expect(() => run(["-w", "n3,n4", "-n", "4", "--ntasks-per-node=2", "x"], env)).toThrow("error: Unable to create step for job 7: More processors requested than permitted");
    expect(run(["-N", "2", "-w", "n3,n4", "-n", "4", "--ntasks-per-node=2", "--overcommit", "x"], env).run).toContain("--tasks-per-node=2");
  });

  test("a task's end in Slurm 22.05's srun's words (side by side); a program not started ends with execve's errno", () => {
    expect(srunTaskEnd({ node: "n2", rank: 1, code: 4 })).toBe("n2: task 1: Exited with exit code 4");
    expect(srunTaskEnd({ node: "n1", rank: 0, code: 137, signal: "SIGKILL" })).toBe("n1: task 0: Killed");
    expect(srunTaskEnd({ node: "n1", rank: 0, code: 139, signal: "SIGSEGV" })).toBe("n1: task 0: Segmentation fault");
    expect(srunTaskEnd({ node: "n1", rank: 0, code: 143, signal: "SIGTERM" })).toBe("n1: task 0: Terminated");
    expect(srunTaskEnd({ node: "n1", rank: 3, code: 137, signal: "SIGKILL", oom: true })).toBe("n1: task 3: Out Of Memory");
    expect([srunExecCode(127), srunExecCode(126)]).toEqual([2, 13]);
    expect(slurmstepdExecLine("n1", "nosuchprog: No such file or directory")).toBe("slurmstepd-n1: error: execve(): nosuchprog: No such file or directory\n");
  });

  test("a node's tasks that end alike and are reported together are one line, as srun's (n1: tasks 0-3: ...); Out Of Memory once", () => {
    const ends = new SrunEnds();
    for (const rank of [0, 1, 2, 3]) ends.add({ node: "n1", rank, code: 2 });
    for (const rank of [5, 4]) ends.add({ node: "n2", rank, code: 2 });
    ends.add({ node: "n2", rank: 6, code: 3 });
    ends.add({ node: "n3", rank: 7, code: 137, signal: "SIGKILL" });
    ends.add({ node: "n3", rank: 9, code: 137, signal: "SIGKILL" });
    expect(ends.flush()).toEqual(["n1: tasks 0-3: Exited with exit code 2", "n2: tasks 4-5: Exited with exit code 2", "n2: task 6: Exited with exit code 3", "n3: tasks 7,9: Killed"]);
    expect(ends.flush()).toEqual([]);
    ends.add({ node: "n1", rank: 0, code: 137, signal: "SIGKILL", oom: true });
    ends.add({ node: "n2", rank: 1, code: 137, signal: "SIGKILL", oom: true });
    expect(ends.flush()).toEqual(["n1: task 0: Out Of Memory"]);
    ends.add({ node: "n1", rank: 2, code: 137, signal: "SIGKILL", oom: true });
    expect(ends.flush()).toEqual([]);
  });

  test("--mail-type and --mail-user pass without a word, as srun's inside a job", () => {
    expect(run(["--mail-type=END", "--mail-user", "me@x", "x"])).toEqual({ run: ["--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "x"], warnings: [] });
  });
});
