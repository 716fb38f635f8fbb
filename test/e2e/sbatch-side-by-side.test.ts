/**
 * Slurm scripts run as they are: the fifty batch scripts of test/fixtures/sbatch/ (each with the
 * flags and idiom of a public repository's script, named in its header) submitted to a real Slurm
 * (munged, slurmctld and four slurmd on loopback: test/support/slurm.ts) with `sbatch --wait` and
 * to ebb (a controller and four agents) with `ebb submit --wait`, side by side, unchanged: the
 * same job ids, exit codes and end states, the same output files with the same lines, and the
 * same values of every SLURM_* variable both set. Both clusters have the same names (nodes n1..n4
 * of 4 CPUs shared by jobs core by core, cluster "ebb", default partition "all") and get the same submissions in the same
 * order, so they number the jobs alike; the directories differ, and are compared as {dir}. The
 * launchers' own diagnostics (srun's, slurmstepd's, ebb's) are worded by each and left out. The
 * scripts whose files name no node and that submit no job run at once (submitAtOnce), each from a
 * directory of its own, the others one at a time (a job's nodes, and the ids of the jobs it
 * submits, depend on what else runs). The tests' own sbatch --wait polls every 0.2 s instead of 2
 * (LocalSlurm.waitEnv). Uses Slurm: run it
 * alone (`bun test test/e2e/sbatch-side-by-side.test.ts`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runProcess, TestCluster } from "../support/cluster.ts";
import { compileMpi } from "../support/mpi.ts";
import { LocalSlurm } from "../support/slurm.ts";
import { SSTAT_REFUSAL } from "../../src/cli/sstat.ts";

const NODES = ["n1", "n2", "n3", "n4"];
const FIXTURES = join(ROOT, "test/fixtures/sbatch");
let slurm: LocalSlurm;
let c: TestCluster;
/** mpirun-allreduce.sh's program, built as its users build it before they submit. */
let allreduce: string | undefined;
/** The directory each side submits from one job at a time. */
const dirs = { slurm: "", ebb: "" };
/** Every directory made to submit from, removed at the end. */
const made: string[] = [];

/** A directory to submit from on `side`: the scripts, their payload's data and an empty logs/. */
function submitDir(side: "slurm" | "ebb"): string {
  const dir = mkdtempSync(join(tmpdir(), `ebb-side-${side}-`));
  made.push(dir);
  cpSync(FIXTURES, dir, { recursive: true });
  writeFileSync(join(dir, "inputs.txt"), "alpha\nbeta\ngamma\n");
  if (allreduce) cpSync(allreduce, join(dir, "allreduce"));
  mkdirSync(join(dir, "logs"));
  return dir;
}

beforeAll(async () => {
  allreduce = await compileMpi("sbatch-allreduce", readFileSync(join(FIXTURES, "allreduce.c"), "utf8"));
  slurm = new LocalSlurm(NODES, { cpus: 4, memoryMb: 4096, partitions: ["all", "development"], clusterName: "ebb", shared: true });
  // The same partitions on both sides: "all" (the default) and "development", every node in each.
  const config = join(mkdtempSync(join(tmpdir(), "ebb-side-config-")), "controller.json");
  writeFileSync(config, JSON.stringify({ partitions: [{ name: "all", nodes: "ALL", default: true }, { name: "development", nodes: "ALL" }] }));
  c = new TestCluster({ agents: 0, cpus: 4, controllerArgs: ["--config", config] });
  await Promise.all([
    slurm.start(),
    (async () => {
      await c.startController();
      for (const n of NODES) c.startAgent(n);
      await c.waitNodes(NODES.length, "IDLE", 120_000);
    })(),
  ]);
  for (const side of ["slurm", "ebb"] as const) dirs[side] = submitDir(side);
}, 240_000);

afterAll(async () => {
  await Promise.all([slurm?.stop(), c?.stop()]);
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

interface Run {
  /** What sbatch --wait / ebb submit --wait exited with: the job's exit code (an array's highest). */
  code: number;
  id: number;
  stderr: string;
  state: string;
  /** The directory it was submitted from. */
  dir: string;
  /** The files the job wrote, by name, their text with the directory as {dir} and without the launchers' diagnostics. */
  files: Record<string, string>;
}

/**
 * The job's end state as Slurm's controller has it (scontrol; an array task's, by array id and
 * task): sbatch --wait may return while the job is still COMPLETING, which is no end state.
 */
async function slurmState(id: number): Promise<string> {
  for (;;) {
    const r = Bun.spawnSync(["scontrol", "show", "job", String(id)], { env: slurm.env });
    const state = /JobState=(\S+)/.exec(r.stdout.toString())?.[1];
    if (state !== "COMPLETING") return state ?? `unknown (${r.stderr.toString().trim()})`;
    await Bun.sleep(200);
  }
}

/** Submits `script` with `flags` and the script's arguments `args` to one side and waits for it; what it left. */
async function submit(side: "slurm" | "ebb", script: string, flags: string[], args: string[] = []): Promise<Run> {
  const dir = dirs[side];
  const before = new Set(files(dir));
  const r =
    side === "slurm"
      ? await runProcess(["sbatch", "--wait", ...flags, script, ...args], { env: slurm.waitEnv, cwd: dir })
      : await c.ebb(["submit", "--wait", ...flags, script, ...args], { cwd: dir });
  // sbatch --parsable (#SBATCH --parsable too) prints the id alone.
  const id = Number(/^(?:Submitted batch job )?(\d+)$/m.exec(r.stdout)?.[1]);
  if (!(id > 0)) throw new Error(`${side}: ${script} was not submitted: ${r.stdout} ${r.stderr}${side === "slurm" ? slurm.logs() : c.daemonLogs()}`);
  const state = side === "slurm" ? await slurmState(id) : (await c.job(id)).state;
  return { code: r.code, id, stderr: r.stderr.replaceAll(dir, "{dir}"), state, dir, files: newFiles(dir, before) };
}

/** The files under `dir` not in `before`, by relative path: their text, the directory as {dir}, without the launchers' diagnostics. */
function newFiles(dir: string, before: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of files(dir)) if (!before.has(f)) out[f] = clean(readFileSync(join(dir, f), "utf8").replaceAll(dir, "{dir}"));
  return out;
}

/** Files under `dir` (one level of subdirectories), by relative path. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? readdirSync(join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name]));
}

async function sideBySide(script: string, flags: string[] = [], args: string[] = []): Promise<{ slurm: Run; ebb: Run }> {
  const [s, e] = await Promise.all([submit("slurm", script, flags, args), submit("ebb", script, flags, args)]);
  expect(e.id).toBe(s.id);
  return { slurm: s, ebb: e };
}

interface Entry {
  script: string;
  flags?: string[];
  args?: string[];
}

/**
 * Scripts whose output names no node, run at once, each from a directory of its own: each
 * submitted with --wait once the one before has its id (so both sides number them alike), all
 * waited for together, each with the files it wrote. Saves the side by side's wall time a job at a
 * time would take.
 */
async function submitAtOnce(side: "slurm" | "ebb", entries: readonly Entry[]): Promise<Run[]> {
  const started: Promise<Run>[] = [];
  for (const e of entries) {
    const dir = submitDir(side);
    const before = new Set(files(dir));
    const argv = ["--wait", ...(e.flags ?? []), e.script, ...(e.args ?? [])];
    const p = side === "slurm" ? Bun.spawn(["sbatch", ...argv], { env: slurm.waitEnv, cwd: dir, stdout: "pipe", stderr: "pipe" }) : c.ebbSpawn(["submit", ...argv], { cwd: dir });
    const reader = p.stdout.getReader();
    let text = "";
    let id: number | undefined;
    while (id === undefined) {
      const { value, done } = await reader.read();
      if (value) text += new TextDecoder().decode(value);
      id = Number(/^(?:Submitted batch job )?(\d+)$/m.exec(text)?.[1]) || undefined;
      if (done && id === undefined) throw new Error(`${side}: ${e.script} was not submitted: ${text} ${await new Response(p.stderr).text()}`);
    }
    reader.releaseLock();
    const stderr = new Response(p.stderr).text();
    // The state asked as soon as sbatch --wait returns: Slurm forgets an ended job MinJobAge (5 s) later.
    started.push(
      (async () => {
        const code = await p.exited;
        const state = side === "slurm" ? await slurmState(id!) : (await c.job(id!)).state;
        return { code, id: id!, stderr: (await stderr).replaceAll(dir, "{dir}"), state, dir, files: newFiles(dir, before) };
      })(),
    );
  }
  return Promise.all(started);
}

/** The launchers' own lines, worded by each ("srun: error: n1: task 0: Exited with exit code 1", "ebb: error: rank 0 on n1 exited with code 1", "slurmstepd-n1: error: ..."). */
const DIAGNOSTIC = /^(srun|ebb|slurmstepd(-\w+)?): /;
const clean = (text: string) => text.split("\n").filter((l) => !DIAGNOSTIC.test(l)).join("\n");
const diagnostics = (dir: string, file: string) => readFileSync(join(dir, file), "utf8").split("\n").filter((l) => DIAGNOSTIC.test(l));
/** script-args.sh's arguments: spaces, quotes, $, ` and an empty one. */
const SCRIPT_ARGS = ["configs/base.yaml", "two words", `it's "quoted"`, "$HOME and `pwd`", "", "--lr=0.1"];
/** A file's lines, sorted: the ranks of a step print in whatever order they run. */
const lines = (text: string | undefined) => (text ?? "").split("\n").filter(Boolean).sort();

describe("fifty Slurm scripts, under Slurm and under ebb", () => {
  test("an array whose tasks read their line of a list: sed -n \"${SLURM_ARRAY_TASK_ID}p\" (sbatch --array=1-3)", async () => {
    const r = await sideBySide("array-sed.sh", ["--array=1-3"]);
    expect(r.ebb.files).toEqual(r.slurm.files);
    expect(r.slurm.files).toEqual({
      "slurm-1_1.out": "task 1 of 3 (1-3:1)\nalpha\n",
      "slurm-1_2.out": "task 2 of 3 (1-3:1)\nbeta\n",
      "slurm-1_3.out": "task 3 of 3 (1-3:1)\ngamma\n",
    });
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("8 tasks on 2 nodes, srun hostname in each, in sbatch's default output file", async () => {
    const r = await sideBySide("srun-hostname.sh");
    const file = `slurm-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(r.ebb.files[file]).toBe(r.slurm.files[file]!);
    expect(r.slurm.files[file]).toEndWith("hostname: 8 tasks (4(x2)) on 2 nodes, n[1-2]\n");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("every SLURM_ variable of the batch shell, two steps and the shell's rank, in a partition of its own", async () => {
    const r = await sideBySide("env-multinode.sh");
    const file = `logs/hello-multinode_${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    const env = (run: Run) => Object.fromEntries(lines(run.files[file]).flatMap((l) => (/^SLURMD?_\w+=/.test(l) ? [[l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]] : [])));
    const [s, e] = [env(r.slurm), env(r.ebb)];
    // What Slurm sets that ebb does not: its own configuration and internals, the task's pid, and
    // the memory per core of a job that names none (its DefMemPerCPU; ebb sets it when asked for).
    expect(Object.keys(s).filter((k) => !(k in e))).toEqual(["SLURM_CONF", "SLURM_MEM_PER_CPU", "SLURM_NODE_ALIASES", "SLURM_PRIO_PROCESS", "SLURM_TASK_PID", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "SLURM_WORKING_CLUSTER"]);
    expect(Object.keys(e).filter((k) => !(k in s))).toEqual([]);
    // The same values, the partition's included.
    const common = Object.keys(s).filter((k) => k in e);
    expect(Object.fromEntries(common.map((k) => [k, e[k]]))).toEqual(Object.fromEntries(common.map((k) => [k, s[k]])));
    expect(common.length).toBeGreaterThanOrEqual(20);
    expect([s.SLURM_JOB_PARTITION, e.SLURM_JOB_PARTITION]).toEqual(["development", "development"]);
    expect(r.ebb.stderr).toBe("");
    const rest = (run: Run) => lines(run.files[file]).filter((l) => !/^SLURMD?_\w+=/.test(l));
    expect(rest(r.ebb)).toEqual(rest(r.slurm));
    expect(rest(r.slurm)).toContain("job ends on n1 as rank 0");
    expect(rest(r.slurm)).toContain("rank 1 of 2 on n2, step 1, node 1, local 0");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
  }, 120_000);

  test("a task count alone: the nodes and tasks per node Slurm gives, where srun's ranks run, and the SLURM_DISTRIBUTION srun chose", async () => {
    const r = await sideBySide("ntasks-only.sh");
    const file = `ntasks-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    // Slurm fills a node's CPUs before it takes the next: 4 + 2 tasks on 2 of the 4 nodes.
    expect(lines(r.slurm.files[file])).toContain("job: 6 tasks (4,2) on 2 nodes n[1-2] (4,2 CPUs)");
    expect(lines(r.slurm.files[file])).toContain("task 4 on n2, node 1, local 0, 4,2, block");
    // Without -m, srun's ranks see the distribution srun chose: cyclic for a task or fewer per node, else block.
    expect(lines(r.slurm.files[file])).toContain("two: task 1 on n2, distribution cyclic");
    expect(lines(r.slurm.files[file])).toContain("one: cyclic");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("a task count and cores per task, no node count: as many nodes as hold the tasks' cores, srun's ranks alike, -m cyclic too", async () => {
    const r = await sideBySide("ntasks-cpus.sh");
    const file = `ntasks-cpus-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    expect(lines(r.slurm.files[file])).toContain("job: 3 tasks (2,1) on 2 nodes n[1-2] (4,2 CPUs), 2 threads");
    expect(lines(r.slurm.files[file])).toContain("cyclic: task 2 on n1, local 1");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("--distribution=cyclic:cyclic with a task count alone: srun's ranks cyclic by default, in blocks with -m block, two at a time with plane=2", async () => {
    const r = await sideBySide("cyclic-tasks.sh");
    const file = `cyclic-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    // Cyclic over 4 + 2 tasks: node 1 full after tasks 1 and 3, tasks 4 and 5 go to node 0.
    expect(lines(r.slurm.files[file])).toContain("default: task 4 on n1, node 0, local 2, here 0,2,4,5, 4,2, cyclic:cyclic");
    expect(lines(r.slurm.files[file])).toContain("plane: task 2 on n2, node 1, local 0, here 2,3, 2(x2), plane 2");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    // Said once, at submission; the job's steps take it quietly.
    expect(r.ebb.stderr).toBe("ebb submit: warning: --distribution=cyclic:cyclic: the :cyclic level is ignored: ebb binds each rank of a node to its own consecutive cores (--cpu-bind=cores), without sockets\n");
    expect(diagnostics(dirs.ebb, file)).toEqual([]);
  }, 120_000);

  test("srun --jobid $SLURM_JOBID on 4 nodes whose tasks fail: the script sees srun fail and goes on", async () => {
    const r = await sideBySide("srun-jobid.sh");
    const file = `test-nodes-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    for (const l of ["srun exited 1", "srun -N 1 exited 1", "a missing program's srun exited 2", "srun -n 2 exited 4"]) expect(lines(r.slurm.files[file])).toContain(l);
    // srun's own lines, the same on both sides: a line per failed task, the refused step's, the
    // warnings; and slurmstepd's for the program not there.
    const srun = (dir: string) => diagnostics(dir, file).filter((l) => /^(srun: (error: (\S+: tasks? \d|Unable)|Warning)|slurmstepd-\w+: error: execve)/.test(l)).sort();
    expect(srun(dirs.ebb)).toEqual(srun(dirs.slurm));
    expect(srun(dirs.slurm)).toContain("srun: error: n1: task 0: Exited with exit code 2");
    expect(srun(dirs.slurm)).toContain("slurmstepd-n1: error: execve(): no-such-program: No such file or directory");
    expect(srun(dirs.slurm)).toContain("srun: error: n2: task 1: Exited with exit code 4");
    expect(srun(dirs.slurm)).toContain(`srun: error: Unable to create step for job ${r.slurm.id}: More processors requested than permitted`);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("mpirun, mpiexec and srun --mpi=pmi2 of an MPICH program on 2 nodes, a rank failing under the last two: the same ranks, node groups, sums and exit codes", async () => {
    const r = await sideBySide("mpirun-allreduce.sh");
    const file = `result_${r.ebb.id}.txt`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    const runs = ["mpirun", "failing-mpiexec", "failing-srun"];
    expect(lines(r.slurm.files[file])).toEqual(
      [...runs.flatMap((run) => [0, 1, 2, 3].map((rank) => `${run}: rank ${rank} of 4, ${rank % 2} of 2 on its node, sum 10`)), "mpiexec exited 3"].sort(),
    );
    // The failed srun's rank, reported by each launcher in its own words.
    expect([diagnostics(dirs.slurm, file).length, diagnostics(dirs.ebb, file).length]).toEqual([1, 1]);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect([r.slurm.code, r.slurm.state]).toEqual([3, "FAILED"]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("a distributed trainer's variables under set -euo pipefail: MASTER_ADDR from scontrol show hostnames, srun -w of the head node, --mem=0 with --exclusive", async () => {
    const r = await sideBySide("ddp-vars.sh");
    const file = `dist_test-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    expect(lines(r.slurm.files[file])).toEqual([
      ...[0, 1, 2, 3].map((rank) => `RANK=${rank} LOCAL_RANK=${rank % 2} WORLD_SIZE=4 on n${rank < 2 ? 1 : 2}, master n1:3442`),
      "head node n1",
      "node 0 of 2: 4(x2) cores",
      "node 1 of 2: 4(x2) cores",
      "nodes: n1 n2 (n[3,1-2])",
    ]);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect([r.slurm.code, r.slurm.state]).toEqual([0, "COMPLETED"]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("an MPMD step: srun -l --multi-prog, each rank its line of the file with %t and %o, into -o and -e files of fixed names", async () => {
    const r = await sideBySide("multi-prog.sh");
    expect(Object.keys(r.ebb.files).sort()).toEqual(["errfile.txt", "outfile.txt"]);
    expect(lines(r.ebb.files["outfile.txt"])).toEqual(lines(r.slurm.files["outfile.txt"]));
    expect(lines(r.slurm.files["outfile.txt"])).toEqual([
      "0: master of 8 on n1",
      "1: worker 1, offset 0",
      "2: worker 2, offset 1",
      "3: worker 3, offset 2",
      "4: spare 4 on n2",
      "5: spare 5 on n2",
      "6: worker 6, offset 3",
      "7: spare 7 on n2",
    ]);
    expect([r.ebb.files["errfile.txt"], r.slurm.files["errfile.txt"]]).toEqual(["", ""]);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("ebb submit: warning: ignoring #SBATCH flags ebb does not have: --account=rajasek (line 5: ebb keeps no accounts)\n");
  }, 120_000);

  test("srun -t with files per task (-o ...-%t.out) and per node (%n), one error file, every task reading -i FILE", async () => {
    const r = await sideBySide("srun-files.sh");
    const id = r.slurm.id;
    const tasks = [0, 1, 2, 3].map((t) => `logs/task-${id}.0-${t}.out`);
    expect(Object.keys(r.ebb.files).sort()).toEqual([`logs/node-${id}-0.out`, `logs/node-${id}-1.out`, ...tasks, `logs/tasks-${id}.err`, `srun-files-${id}.out`].sort());
    for (const f of Object.keys(r.slurm.files)) expect([f, lines(r.ebb.files[f])]).toEqual([f, lines(r.slurm.files[f])]);
    expect(r.slurm.files[tasks[3]!]).toBe(["alpha", "beta", "gamma"].map((w) => `rank 3 of 4 on n2 read ${w}\n`).join(""));
    expect(lines(r.slurm.files[`logs/node-${id}-1.out`])).toEqual(["rank 2 on node 1 of 2", "rank 3 on node 1 of 2"]);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("sinfo in a job: its default table, -N -h -o, -p, -t idle, the loops and counts scripts build on them (never the host's Slurm); sstat refused", async () => {
    const r = await sideBySide("sinfo-nodes.sh");
    const file = `sinfo-${r.slurm.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(r.ebb.files[file]).toBe(r.slurm.files[file]!);
    expect(r.slurm.files[file]).toContain("\nall*           up   infinite      2    mix n[1-2]\n");
    expect(r.slurm.files[file]).toContain("\nn2      |mixed     |   4|1/3/0/4|1|all*|up|infinite|(null)\n");
    expect(r.slurm.files[file]).toContain("\nusable nodes: 4\nidle nodes: 2\n");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
    // ebb's sstat is refused (Slurm's answers from its accounting); a job on Slurm keeps the two sides' job ids in step.
    const [sstat] = await Promise.all([
      c.ebb(["submit", "--wait", "--wrap", 'sstat --format=JobID,MaxRSS -P "$SLURM_JOB_ID.batch"; echo "sstat exited $?"'], { cwd: dirs.ebb }),
      runProcess(["sbatch", "--wait", "-o", "/dev/null", "--wrap", "true"], { env: slurm.env, cwd: dirs.slurm }),
    ]);
    const id = Number(/Submitted batch job (\d+)/.exec(sstat.stdout)?.[1]);
    expect(readFileSync(join(dirs.ebb, `ebb-${id}.out`), "utf8")).toBe(`sstat: error: ${SSTAT_REFUSAL}\nsstat exited 1\n`);
  }, 120_000);

  test("-N 3 -n 6: the tasks per node Slurm's cons_tres gives (4,1,1 on idle 4-core nodes), where srun's tasks run, a packed step's SLURM_DISTRIBUTION, and srun --ntasks-per-node=2 laid out 3,2,1 over them", async () => {
    const r = await sideBySide("tasks-layout.sh");
    const file = `logs/hello-layout_${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    expect(lines(r.slurm.files[file])).toContain("job: 6 tasks (4,1(x2)) on 3 nodes (4,1(x2) CPUs), 4 here");
    expect(lines(r.slurm.files[file])).toContain("task 5 on n3, local 0 of 4,1(x2)");
    expect(lines(r.slurm.files[file])).toContain("packed: task 1 on n1, block:block:block,pack");
    expect(lines(r.slurm.files[file]).filter((l) => l.startsWith("per node 2: "))).toEqual([0, 1, 2, 3, 4, 5].map((t) => `per node 2: task ${t} on n${t < 3 ? 1 : t < 5 ? 2 : 3}, 3,2,1`));
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  /** Every file either side wrote, its lines sorted (tasks print in whatever order they run), and the same end. */
  async function sameRun(script: string, flags: string[] = [], args: string[] = []): Promise<{ slurm: Run; ebb: Run }> {
    const r = await sideBySide(script, flags, args);
    expect(Object.keys(r.ebb.files).sort()).toEqual(Object.keys(r.slurm.files).sort());
    for (const f of Object.keys(r.slurm.files)) expect([f, lines(r.ebb.files[f])]).toEqual([f, lines(r.slurm.files[f])]);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    return r;
  }

  test("a workflow submitted from a job: sbatch --parsable, then jobs -d afterok/afterany on it with arguments, squeue -j polled for the last; SLURM_JOB_DEPENDENCY", async () => {
    const r = await sameRun("job-chain.sh");
    const id = r.slurm.id;
    expect(r.slurm.files[`mult-job_mult_5.out`]).toBe(`job_mult_5: 30, dependency afterok:${id + 1}\n`);
    expect(r.slurm.files[`mult-job_mult_10.out`]).toBe(`job_mult_10: 60, dependency afterany:${id + 2}\n`);
    expect(r.slurm.files[`chain-${id}.out`]).toBe("first is 1 after me\nlast ended\n");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("sbatch in an array task: the new job and its step see the task's SLURM_* (SLURM_ARRAY_TASK_ID, SLURM_NTASKS...) under their own, as Slurm passes them on", async () => {
    const r = await sameRun("sbatch-in-array.sh");
    expect(lines(r.slurm.files["nest-child.out"])).toContain("SLURM_ARRAY_TASK_ID=2");
    expect(lines(r.slurm.files["nest-child.out"])).toContain("SLURM_NTASKS=4");
    expect(lines(r.slurm.files["nest-child.out"])).toContain("SLURM_CPUS_PER_TASK=1");
    expect(lines(r.slurm.files["nest-child.out"])).toContain("SLURM_JOB_CPUS_PER_NODE=1");
    expect(lines(r.slurm.files["nest-step.txt"])).toContain("SLURM_NTASKS_PER_NODE=2");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("--export=NONE: srun's tasks get none of what the batch shell exported (SLURM_EXPORT_ENV), as Slurm's; -o with %x", async () => {
    const r = await sameRun("export-none.sh");
    expect(lines(r.slurm.files[`myjob.${r.slurm.id}.ex1.out`])).toContain("task 3 on n2, MKL_NUM_THREADS unset, PATH set");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("a template's variables (SLURMTMPDIR unset), NPROCS from srun --nodes=$SLURM_NNODES hostname | wc -l", async () => {
    const r = await sameRun("template-nprocs.sh");
    expect(lines(r.slurm.files[`logs/NAME-${r.slurm.id}.out`])).toContain("NPROCS=2");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("sbatch --array -o one file --open-mode=append -W from a job: every task's line in the one file, and -W's status", async () => {
    const r = await sameRun("array-wait-append.sh");
    expect(r.slurm.files["imi_output.log"]).toBe("member 1 of 3\nmember 2 of 3\nmember 3 of 3\n");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);
  /**
   * Scripts whose files name no node and that submit no job: run at once (submitAtOnce), each test
   * below checks its own. The first, whose signal comes 40 s in, is what the group waits for.
   */
  const AT_ONCE: Entry[] = [
    { script: "signal-cleanup.sh" },
    { script: "open-append.sh", args: ["echo", "hi there"] },
    { script: "omp-mem.sh" },
    { script: "procid-args.sh", args: ["echo one", "echo two", "echo three"] },
    { script: "show-job.sh" },
    { script: "machinefile.sh" },
    { script: "hint-omp.sh" },
    { script: "srun-args.sh", args: ["two words", "three"] },
    { script: "same-log.sh" },
    { script: "tasks-exclusive.sh" },
    { script: "login-shell.sh" },
    { script: "farm-exclusive.sh" },
    { script: "two-steps.sh" },
    { script: "script-args.sh", args: SCRIPT_ARGS },
    // Last, and the only array: Slurm numbers an array's tasks as they start, ebb at submission.
    { script: "array-throttle.sh" },
  ];
  let atOnce: Promise<{ slurm: Run[]; ebb: Run[] }> | undefined;
  const group = () => (atOnce ??= Promise.all([submitAtOnce("slurm", AT_ONCE), submitAtOnce("ebb", AT_ONCE)]).then(([slurm, ebb]) => ({ slurm, ebb })));
  /** The group's run of `script` on each side (the same job id), and the files that run wrote on Slurm. */
  const inGroup = async (script: string) => {
    const g = await group();
    const i = AT_ONCE.findIndex((e) => e.script === script);
    const [s, e] = [g.slurm[i]!, g.ebb[i]!];
    expect(e.id).toBe(s.id);
    return { slurm: s, ebb: e, files: s.files };
  };

  test("fifteen scripts at once: the same ids, exit codes and end states, the same files with the same lines", async () => {
    const g = await group();
    expect(g.ebb.map((r) => [r.id, r.code, r.state])).toEqual(g.slurm.map((r) => [r.id, r.code, r.state]));
    // All exit 0 but signal-cleanup.sh, which ends with wait's status (128 + USR1).
    expect(g.slurm.map((r) => r.code)).toEqual(AT_ONCE.map((e) => (e.script === "signal-cleanup.sh" ? 138 : 0)));
    AT_ONCE.forEach(({ script }, i) => {
      const [s, e] = [g.slurm[i]!, g.ebb[i]!];
      expect([script, Object.keys(e.files).sort()]).toEqual([script, Object.keys(s.files).sort()]);
      for (const f of Object.keys(s.files)) expect([script, f, lines(e.files[f])]).toEqual([script, f, lines(s.files[f])]);
    });
    // Where Slurm is silent, ebb says which flags change nothing here.
    const ignored: Record<string, string> = {
      "signal-cleanup.sh": "ebb submit: warning: ignoring #SBATCH flags ebb does not have: --account=... (line 3: ebb keeps no accounts)\n",
      "hint-omp.sh": "ebb submit: warning: ignoring #SBATCH flags ebb does not have: --ntasks-per-core=1 (line 4: ebb places a job's cores without sockets or threads), --hint=nomultithread (line 7: ebb binds each rank to cores of its own (ebb run --cpu-bind))\n",
    };
    expect(g.ebb.map((r) => r.stderr)).toEqual(AT_ONCE.map((e) => ignored[e.script] ?? ""));
  }, 300_000);

  test("--signal=B:USR1@80 with a 2-minute limit: the batch shell's trap runs while it waits, and the job ends with wait's status", async () => {
    const r = await inGroup("signal-cleanup.sh");
    expect(r.ebb.files).toEqual(r.slurm.files);
    expect(r.slurm.files).toEqual({ [`slurm-${r.slurm.id}.out`]: "calculating\ncleanup: USR1 with 1 task(s) per node 1 in job example\n" });
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect([r.slurm.code, r.slurm.state]).toEqual([138, "FAILED"]);
    expect(r.ebb.stderr).toBe("ebb submit: warning: ignoring #SBATCH flags ebb does not have: --account=... (line 3: ebb keeps no accounts)\n");
  }, 300_000);

  test("a login shell (#!/bin/bash -l) whose /etc/profile sets PATH anew: srun, scontrol and scancel still ebb's; #SBATCH --parsable; --gres=mic:0; zero-padded %3j %5a %2t; scancel --signal to a step", async () => {
    const r = await inGroup("login-shell.sh");
    const id = r.slurm.id;
    const job = `pad-${String(id).padStart(3, "0")}-4294967294-00-batch.out`;
    const steps = [0, 1].map((t) => `step-0${t}-000-${String(id).padStart(4, "0")}.out`);
    expect(Object.keys(r.ebb.files).sort()).toEqual([job, ...steps].sort());
    // The step's line and scancel's may come in either order.
    for (const f of Object.keys(r.slurm.files)) expect([f, lines(r.ebb.files[f])]).toEqual([f, lines(r.slurm.files[f])]);
    expect(lines(r.slurm.files[job])).toEqual(["job lines: 1 1", "scancel 0", "step 0", "step got USR1"]);
    expect(r.slurm.files[steps[1]!]).toBe("rank 1\n");
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 300_000);

  test("a farm of srun -Q --exclusive -n 1 steps started with & in a job of 2 tasks: all 6 run, never more than 2 at once (how many wait when is the machine's, and not compared)", async () => {
    const r = await inGroup("farm-exclusive.sh");
    expect(r.ebb.files).toEqual(r.slurm.files);
    const id = r.slurm.id;
    expect(r.slurm.files).toEqual({
      [`farm_${id}.out`]: "steps that ran: 6\nat most 2 at once: yes\n",
      ...Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`worker_${id}_${i}`, `task ${i} ran\n`])),
    });
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 300_000);

  test("two srun -n 1 ... & steps in a job of one CPU: both run and print the same (Slurm 22.05 one after the other, ebb side by side; when is not compared)", async () => {
    const r = await inGroup("two-steps.sh");
    const file = `two-steps-${r.ebb.id}.out`;
    expect(Object.keys(r.ebb.files)).toEqual([file]);
    expect(lines(r.ebb.files[file])).toEqual(lines(r.slurm.files[file]));
    expect(lines(r.slurm.files[file])).toEqual(["both ended", "step 0", "step 1", "task 1", "task 2"]);
    expect(diagnostics(r.ebb.dir, file)).toEqual([]);
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 300_000);

  test("sbatch script.sh ARG...: the script's $1 $2 ... with spaces, quotes, $ and an empty one, handed on with \"$@\"", async () => {
    const r = await inGroup("script-args.sh");
    expect(r.ebb.files).toEqual(r.slurm.files);
    expect(r.slurm.files).toEqual({ [`logs/args-${r.slurm.id}.out`]: `6 arguments, the first configs/base.yaml\n${SCRIPT_ARGS.map((a) => `[${a}]\n`).join("")}` });
    expect([r.ebb.code, r.ebb.state]).toEqual([r.slurm.code, r.slurm.state]);
    expect(r.ebb.stderr).toBe("");
  }, 300_000);

  test("#SBATCH --open-mode=append to a fixed file, the script's arguments eval'ed; srun -o onto a file with --open-mode=append and =truncate", async () => {
    const { slurm: s, files } = await inGroup("open-append.sh");
    expect(files["logs/output.log"]).toBe("echo hi there\nhi there\n\n");
    expect(files[`output-ps3.1/slurm-${s.id}-A.out`]).toBe("1\n2\n");
    expect(files[`output-ps3.1/slurm-${s.id}-B.out`]).toBe("2\n");
  }, 300_000);

  test("an OpenMP job: -c 2 --mem-per-cpu, OMP_NUM_THREADS from SLURM_CPUS_PER_TASK, srun -c, -o and -e of fixed names", async () => {
    const { files } = await inGroup("omp-mem.sh");
    expect(lines(files["omp_mem_test.out"])).toContain("SLURM_MEM_PER_CPU: 512");
    expect(lines(files["omp_mem_test.err"])).toEqual(["oops"]);
  }, 300_000);

  test("a script that srun runs again as its tasks, each running the argument its SLURM_PROCID picks", async () => {
    const { slurm: s, files } = await inGroup("procid-args.sh");
    expect(lines(files[`procid-${s.id}.out`])).toEqual([`batch: ${s.id}.0 3`, ...[0, 1, 2].map((t) => `JOB.${t} echo one echo two echo three`), "one", "three", "two"].sort());
  }, 300_000);

  test("--array=1-7:3%2 with -o/-e per task (%A-%a): SLURM_ARRAY_TASK_COUNT, MIN, MAX, STEP", async () => {
    const { slurm: s, files } = await inGroup("array-throttle.sh");
    expect(files[`slurm_array_${s.id}-4.out`]).toBe("SLURM_ARRAY_TASK_ID is 4\nThere are 3 tasks in this array, 1-7:3\nMultiplying 4 by 10: 40\n");
    expect(files[`slurm_array_${s.id}-7.err`]).toBe("to err\n");
  }, 300_000);

  test("scontrol show job's fields picked with grep -o and awk (JobState, NumNodes, Partition, BatchFlag, Priority, StdOut), case on SLURM_NODEID", async () => {
    const { slurm: s, files } = await inGroup("show-job.sh");
    expect(lines(files[`showjob-${s.id}.out`])).toContain("Priority=N");
    expect(lines(files[`showjob-${s.id}.out`])).toContain(`StdOut={cwd}/showjob-${s.id}.out`);
  }, 300_000);

  test("srun hostname | sort > machinefile.$SLURM_JOB_ID, NP from its lines; SLURM_NPROCS made from SLURM_NTASKS_PER_NODE only when unset", async () => {
    const { files } = await inGroup("machinefile.sh");
    expect(files["hw1.out"]).toBe("NP=8\nwould run: mpirun -machinefile machinefile -np 8\n");
    expect(files["hw1.err"]).toBe("");
  }, 300_000);

  test("--hint=nomultithread and --ntasks-per-core=1 under bash -l (accepted, nothing changes), OMP_NUM_THREADS from SLURM_CPUS_PER_TASK", async () => {
    const { slurm: s, files } = await inGroup("hint-omp.sh");
    expect(files[`hint-omp-${s.id}.out`]).toBe("task 0 of 1: 2 threads, 2 CPUs a task, 2 on the node\n");
  }, 300_000);

  test("srun -N 1 -n 1 -c 1 --exclusive with the script's unquoted $@ (split on spaces), --mem's SLURM_MEM_PER_NODE", async () => {
    const { slurm: s, files } = await inGroup("srun-args.sh");
    expect(files[`srun-args-${s.id}.out`]).toBe("[two]\n[words]\n[three]\nstep exit 0, SLURM_MEM_PER_NODE=256\n");
  }, 300_000);

  test("-o and -e the same file in a directory of its own: both streams whole, the shell's and its steps' (one open file, as Slurm's)", async () => {
    const { files } = await inGroup("same-log.sh");
    expect(lines(files["msg/jacques.msg"])).toEqual(["task 0 err", "task 0 out", "task 1 err", "task 1 out", "to err", "to out: jacques in development, 2 tasks, 512 MB"]);
  }, 300_000);

  test("-N 1 --tasks-per-node=2 -c 2 --exclusive: the whole node's CPUs held, each task's -c", async () => {
    const { slurm: s, files } = await inGroup("tasks-exclusive.sh");
    expect(lines(files[`tasks-exclusive-${s.id}.out`])).toEqual(["2 tasks (2), 4 CPUs held, 2 a task", "task 0: 2 CPUs, local 0", "task 1: 2 CPUs, local 1"]);
  }, 300_000);

  test("--mem-per-cpu alone: SLURM_MEM_PER_NODE empty, SLURM_NPROCS unset, what the node has, echoed", async () => {
    const r = await sameRun("node-info.sh");
    expect(lines(r.slurm.files[`node-info-${r.slurm.id}.out`])).toContain("Node has 256 memory per cpu.");
    expect(lines(r.slurm.files[`node-info-${r.slurm.id}.out`])).toContain("Running on  processors.");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("--exclusive --exclude=n1 -c 2 -n 1: the job's SLURM_ variables (a whole node's CPUs) into a file", async () => {
    const r = await sameRun("exclusive-env.sh");
    expect(lines(r.slurm.files["env-exclusive.txt"])).toContain("SLURM_JOB_CPUS_PER_NODE=4");
    expect(lines(r.slurm.files["env-exclusive.txt"])).toContain("SLURM_JOB_NODELIST=n2");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("-n 3 --ntasks-per-node=2 (a count per node -n does not fill): 2(x2) on 2 nodes, srun's 3 tasks 2,1 (bash -x's trace too)", async () => {
    const r = await sameRun("relion-ssub.sh");
    const out = lines(r.slurm.files[`relion-${r.slurm.id}.out`]);
    expect(out).toContain("job: 3 tasks, 2(x2) a node on 2 nodes, CPUs 2(x2)");
    expect(out).toContain("rank 2 on n2 of 2,1, 1 threads");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("--nodelist of one node with --exclusive and --ntasks-per-node, --mail-type (a warning only), a misspelt variable empty", async () => {
    const r = await sameRun("nodelist-echo.sh");
    expect(lines(r.slurm.files[`job.${r.slurm.id}.out`])).toContain("SLURM_JOB_NODELIST:n3");
    expect(lines(r.slurm.files[`job.${r.slurm.id}.out`])).toContain("SLURM_CPU_PER_TASK:");
  }, 120_000);

  test("--kill-on-invalid-dep=yes from a driver: the step after a failed job is cancelled, the one after two that succeeded runs", async () => {
    const r = await sameRun("dep-kill.sh");
    expect(r.slurm.files[`pipeline-${r.slurm.id}.out`]).toBe("the step after the failed one never ran\n");
    expect(r.slurm.files["step-good.out"]).toBe(`ran after afterok:${r.slurm.id + 1}:${r.slurm.id + 2}\n`);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("pending jobs moved with scontrol update (partition=, NumNodes=2-2, TimeLimit=) over squeue -u -h -t PD -o %i, then scontrol release; a running job's NumNodes refused", async () => {
    const r = await sameRun("update-pending.sh");
    expect(lines(r.slurm.files[`updater-${r.slurm.id}.out`])).toContain("worker2: 2 nodes (n[1-2]), tasks 1(x2), CPUs 1(x2), in development");
    expect(lines(r.slurm.files[`updater-${r.slurm.id}.out`])).toContain("running: refused");
    expect(r.ebb.stderr).toBe("");
  }, 180_000);

  test("#SBATCH --array=0-2 with #SBATCH --parsable, cd $SLURM_SUBMIT_DIR, srun in each task: slurm-%A_%a.out", async () => {
    const r = await sameRun("array-parsable.sh");
    expect(lines(r.slurm.files[`slurm-${r.slurm.id}_2.out`])).toEqual(["array task 2 rank 0 of 2, slurm_test", "array task 2 rank 1 of 2, slurm_test"]);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("scontrol show hostname $SLURM_JOB_NODELIST into hosts.txt, one name a line, SLURM_JOB_CPUS_PER_NODE and SLURM_TASKS_PER_NODE after them", async () => {
    const r = await sameRun("hosts-txt.sh");
    expect(r.slurm.files["hosts.txt"]).toBe("n1\nn2\nn3\n2(x3)\n2(x3)\n");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("a driver job that submits workers and waits until squeue (-h -n NAME; -r -u with --format, grep, awk) shows none of them", async () => {
    const r = await sameRun("wait-children.sh");
    expect(r.slurm.files[`driver-${r.slurm.id}.out`]).toBe("slurm done\nworker 1 done\nworker 2 done\ndriver RUNNING 1 1\n");
    expect(r.ebb.stderr).toBe("");
  }, 180_000);

  test("an array whose files name the task alone (-o arrayjob-%a.out -e arrayjob-%a.err)", async () => {
    const r = await sameRun("array-task-files.sh");
    expect(r.slurm.files).toEqual({ "arrayjob-1.out": "Running job array number: 1\n", "arrayjob-1.err": "", "arrayjob-2.out": "Running job array number: 2\n", "arrayjob-2.err": "" });
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("--output=%x.o%A_%a, the #SBATCH --array overridden on the command line (--array=1-4), SLURM_ARRAY_TASK_COUNT", async () => {
    const r = await sameRun("hello-array.sh", ["--array=1-4"]);
    expect(r.slurm.files[`hello_array.o${r.slurm.id}_4`]).toBe(`Hello from array n°4 of 4\n${hostname()}\n`);
    expect(Object.keys(r.slurm.files)).toHaveLength(4);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("the job's name from scontrol show job -o (python) and from its first line (awk, sed); srun -N 4 -n 8 --ntasks-per-node=2 steps into -o/-e files of %4s", async () => {
    const r = await sameRun("step-format.sh");
    const id = r.slurm.id;
    expect(r.slurm.files[`step-format-${id}.out`]).toBe("name fmt_s, first line's second word Jobfmt_s\n");
    expect(lines(r.slurm.files[`output-fmt_s/slurm-${id}-0002.out`])).toEqual(["2: rank 0 of 8 on n1", "2: rank 1 of 8 on n1", "2: rank 2 of 8 on n2", "2: rank 3 of 8 on n2", "2: rank 4 of 8 on n3", "2: rank 5 of 8 on n3", "2: rank 6 of 8 on n4", "2: rank 7 of 8 on n4"]);
    expect(lines(r.slurm.files[`output-fmt_s/slurm-${id}-0000.err`])).toContain("0: err 7");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("the nodes from scontrol show hostnames into a bash array, srun --nodes=1 --ntasks=1 -w $node \"$@\" & on all but the first, \"$@\" on it; SLURM_CPUS_ON_NODE", async () => {
    const r = await sameRun("node-runner.sh", ["-N", "3"], ["printenv", "SLURMD_NODENAME"]);
    expect(lines(r.slurm.files[`node-runner-${r.slurm.id}.out`])).toEqual(
      ["n1", "n2", "n3", "nodes:  n1 n2 n3", "nodes_array:  n1", "num_nodes = 3", "printenv SLURMD_NODENAME", "srun --nodes=1 --ntasks=1 -w n2 printenv SLURMD_NODENAME &", "srun --nodes=1 --ntasks=1 -w n3 printenv SLURMD_NODENAME &", "total_cpus = 3"].sort(),
    );
    // Where Slurm is silent, ebb says which flags change nothing here.
    expect(r.ebb.stderr).toBe("ebb submit: warning: ignoring #SBATCH flags ebb does not have: --cpu-freq=high-high:Performance (line 6: ebb does not set CPU frequencies)\n");
  }, 120_000);

  test("#!/bin/sh: a step per name of scontrol show hostnames $SLURM_NODELIST, srun -N 1-1 -n 1 -w $node ... &, then wait", async () => {
    const r = await sameRun("hostnames-copy.sh", ["-N", "3"]);
    expect(r.slurm.files[`hostnames-copy-${r.slurm.id}.out`]).toBe("n1: 3 lines\nn2: 3 lines\nn3: 3 lines\n");
    expect(r.slurm.files["copied.n3"]).toBe("alpha\nbeta\ngamma\n");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("a chain of sbatch ... | awk '{ print $NF }' with afterany, then squeue -o \"%10i %10u %10a %30j %10P %10q %5D %10l %10M %2t %S\" (account and QOS (null), as Slurm's)", async () => {
    const r = await sameRun("pynamic-chain.sh");
    const out = lines(r.slurm.files[`pynamic-chain-${r.slurm.id}.out`]);
    expect(out).toContain("JOBID      USER       ACCOUNT    NAME                           PARTITION  QOS        NODES TIME_LIMIT TIME       ST START_TIME");
    expect(out.find((l) => l.includes(" project "))).toMatch(/ project +all +\(null\) +2 +5:00 +0:00 +PD N\/A$/);
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("--dependency=singleton: the second job of a name waits (PD Dependency) until the first has ended; one of another name does not", async () => {
    const r = await sameRun("singleton.sh");
    expect(r.slurm.files[`singleton-${r.slurm.id}.out`]).toBe("PD Dependency\nfirst ends\nsecond starts\nother runs\n");
    expect(r.ebb.stderr).toBe("");
  }, 120_000);

  test("set -e -x, ids grep -oP'ed from sbatch's line, afterok and afternotok on a job that fails: the afternotok one runs, the afterok one dangles (DependencyNeverSatisfied) until cancelled", async () => {
    const r = await sameRun("dangling.sh");
    expect(lines(r.slurm.files[`dangling-${r.slurm.id}.out`])).toContain("PD DependencyNeverSatisfied");
    expect(r.slurm.files["dangling-job3.out"]).toBe("job3 ran after job1 failed\n");
    expect(r.slurm.files["dangling-job2.out"]).toBeUndefined();
    expect(r.ebb.stderr).toBe("");
  }, 120_000);
});
