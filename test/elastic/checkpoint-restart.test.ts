/**
 * Malleable MPICH programs by checkpoint and restart (libebb, docs/adaptation.md §12): the C Jacobi
 * and the SUMMA matrix product of examples/c, built with `ebb mpicc`, run elastic on loopback
 * clusters of real agents. Each must print the checksum of its fixed-size run under `mpiexec -n 2`
 * after any resizes: user-initiated and scheduler-initiated, grow and shrink, a node lost between
 * periodic checkpoints, or added by a resize (in its probe rounds, its write, its restart: before
 * or after the restarted ranks read the resize's checkpoint); a restart that fails ends the job
 * saying why and keeps the checkpoint; a resize while the program never reaches a safe point times
 * out and the job goes on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandLines, ROOT, runProcess, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";

const MAIN = join(ROOT, "src/main.ts");
const work = mkdtempSync(join(tmpdir(), "ebb-cr-"));
const env = { ...(process.env as Record<string, string>), EBB_CACHE_DIR: join(work, "cache") };
/**
 * The /dev/shm parts of this file's jobs (EBB_CKPT_SHM, which the jobs inherit from the clusters'
 * clients): every cluster numbers its jobs from 1, and another file or CI run may run on the machine.
 */
const shmDir = mkdtempSync("/dev/shm/ebb-cr-");
process.env.EBB_CKPT_SHM = shmDir;

/** `ebb mpicc -O2 -o BIN DIR/NAME.c`; undefined (skipped) without mpicc unless CI=true. */
async function build(name: string, dir = "examples/c"): Promise<string | undefined> {
  if (!Bun.which("mpicc")) {
    if (process.env.CI === "true") throw new Error("mpicc not found (required because CI=true)");
    return undefined;
  }
  const bin = join(work, name);
  const r = await runProcess([process.execPath, MAIN, "mpicc", "-O2", "-o", bin, join(ROOT, dir, `${name}.c`)], { env });
  if (r.code !== 0) throw new Error(`ebb mpicc ${name}: ${r.stdout}${r.stderr}`);
  return bin;
}

const jacobi = await build("jacobi");
/**
 * heldJacobi: jacobi whose resize's write, or restarted rank's read, a test can hold, and whose pace
 * it sets (test/elastic/programs/held-jacobi.c). Both built side by side, with the libebb the first built.
 */
const [summa, heldJacobi] = await Promise.all([build("summa"), build("held-jacobi", "test/elastic/programs")]);

const checksumOf = (out: string) => /^checksum ([0-9a-f]{16})$/m.exec(out)?.[1];

const fixedRuns = new Map<string, Promise<string>>();
/** The fixed-size run's checksum: mpiexec -n 2, no ebb; run once for each argv (the answer is deterministic). */
function fixed(argv: string[]): Promise<string> {
  const key = JSON.stringify(argv);
  let run = fixedRuns.get(key);
  if (!run) {
    run = runProcess(["mpiexec", "-n", "2", ...argv], { env }).then((r) => {
      expect(r.code).toBe(0);
      return checksumOf(r.stdout)!;
    });
    fixedRuns.set(key, run);
  }
  return run;
}

/** A gate file for one test: the test creates it (`openGate`) when the program may go on. */
const gateFile = (name: string) => join(work, `${name}-${Date.now()}`);
const openGate = (gate: string) => Bun.write(gate, "");
/**
 * `ebb run` flags for held-jacobi: its sleeps (--sleep-ms, --stall-ms) end once `gate` exists
 * (EBB_TEST_PACE), so that it is paced while the test resizes or breaks it, and runs at full speed
 * once the test has seen what it waits for. The variable comes with the job's environment, not
 * from a wrapper: a rank that is the MPI program itself is monitored (the CFG library), as users' are.
 */
const paced = (gate: string) => ["--export", `ALL,EBB_TEST_PACE=${gate}`];

/**
 * Has each agent build its CFG library (cfg-lib.ts: compiled with mpicc at the node's first MPI
 * step) before the tests: on a loaded machine the build took 15 s, and a restart onto a node that
 * builds it then waits for it past the adaptation's --adapt-timeout of 12 s (the first grow failed so).
 */
async function buildCfgLibraries(c: TestCluster): Promise<void> {
  const r = await c.ebb(["run", "-N", "4", "-n", "4", jacobi!, "--n", "16", "--iters", "1"]);
  if (r.code !== 0) throw new Error(`ebb run -N 4 jacobi: ${r.stdout}${r.stderr}`);
}

/** /dev/shm parts and checkpoint directories a job left. */
function leftovers(c: TestCluster, jobId: number): string[] {
  const shm = readdirSync(shmDir).filter((f) => f.startsWith(`ebb-ckpt-${jobId}-`));
  const dir = join(c.dir, ".ebb-ckpt", `job-${jobId}`);
  return [...shm, ...(existsSync(dir) ? [dir] : [])];
}

const JACOBI = ["--n", "160", "--iters", "700", "--every", "50"];
/**
 * For the tests that hold the world at a gate (held-jacobi): the hold, not the run's length, places
 * the fault; and for a checkpoint resumed by hand on 3 ranks: 3 busy-polling MPI ranks on 2 cores
 * took 14 s for 650 iterations on a loaded machine (2 ranks: 1-2 s).
 */
const JACOBI_SHORT = ["--n", "160", "--iters", "300", "--every", "50"];
const SUMMA = ["--n", "192", "--mb", "16", "--every", "1"];

/**
 * One cluster for the file (its start and its agents' CFG library builds took over 40 s on a loaded
 * machine): fcfs first, its controller restarted with the elastic scheduler for the last test.
 */
let c: TestCluster;
beforeAll(async () => {
  if (!jacobi) return;
  c = await startCluster({ agents: 4, heartbeat: 1, controllerArgs: ["--policy", "fcfs", "--adapt-timeout", "12"] });
  await buildCfgLibraries(c);
});

afterAll(async () => {
  await c?.stop();
  delete process.env.EBB_CKPT_SHM;
  for (const d of [work, shmDir]) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!jacobi)("resized by the user (ebb resize), nodes lost (the scheduler resizes nothing: fcfs)", () => {

  test("ebb run -N 2 --elastic --min-nodes 1 --max-nodes 4 ./jacobi, ebb resize to 4 then 1: the checksum of mpiexec -n 2, three steps, nothing left behind", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    const pace = gateFile("pace-resize");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(pace), heldJacobi!, ...JACOBI, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    const grow = await c.ebb(["resize", String(job.id), "--nodes", "4", "--wait"]);
    expect(grow.stderr).toBe("");
    expect(grow.code).toBe(0);
    await waitFor("the world of 4", () => /iteration \d+ on 4 ranks/.test(job.output()), 60_000);
    const shrink = await c.ebb(["resize", String(job.id), "--nodes", "1", "--wait"]);
    expect(shrink.code).toBe(0);
    await openGate(pace);
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-5000));
    expect(code).toBe(0);
    expect(out).toMatch(/resumed iteration \d+ on 4 ranks \(was 2\)/);
    expect(out).toMatch(/resumed iteration \d+ on 1 ranks \(was 4\)/);
    expect(checksumOf(out)).toBe(want);
    const end = await c.job(job.id);
    expect(end.state).toBe("COMPLETED");
    expect(end.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.fromRanks, a.toRanks, a.state])).toEqual([
      [2, 4, 2, 4, "COMMITTED"],
      [4, 1, 4, 1, "COMMITTED"],
    ]);
    // One adaptation each, its phases timed in order: agreed, every part written, the old ranks gone, the new ones started, read.
    for (const a of end.adaptations) {
      const t = a.times;
      expect([t.agreed <= t.written, t.written <= t.exited, t.exited <= t.spawned, t.spawned <= t.ready, t.ready <= t.committed]).toEqual([true, true, true, true, true]);
    }
    // The old steps ended on purpose (COMPLETED), each world in a step of its own over its nodes.
    expect(end.steps.map((s: any) => [s.state, s.tasks, s.nodes.length])).toEqual([
      ["COMPLETED", 2, 2],
      ["COMPLETED", 4, 4],
      ["COMPLETED", 1, 1],
    ]);
    const show = await c.ebb(["show", String(job.id)]);
    expect(show.stdout).toMatch(/checkpoint-restart: write \d+ ms, restart \d+ ms, read \d+ ms/);
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test("ebb drain --owner on its last node (issue 34): the world restarts once, at its size, on the free node instead; the checksum of mpiexec -n 2", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    const pace = gateFile("pace-drain");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(pace), heldJacobi!, ...JACOBI, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    const before: string[] = (await c.job(job.id)).allocation;
    expect((await c.ebb(["drain", "--owner", before[1]!])).code).toBe(0);
    await waitFor("the move to end", async () => ["COMMITTED", "FAILED"].includes((await c.job(job.id)).adaptations[0]?.state), 60_000);
    await openGate(pace);
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-5000));
    expect(code).toBe(0);
    expect(out).toMatch(/resumed iteration \d+ on 2 ranks \(was 2\)/);
    expect(checksumOf(out)).toBe(want);
    const end = await c.job(job.id);
    expect(end.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.removed, a.state])).toEqual([[2, 2, [before[1]], "COMMITTED"]]);
    expect(end.adaptations[0].added).toHaveLength(1);
    expect(before).not.toContain(end.adaptations[0].added[0]);
    expect(end.events.filter((e: any) => e.kind === "moved")).toHaveLength(1);
    expect((await c.ebb(["resume", before[1]!])).code).toBe(0);
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test.skipIf(!summa)("SUMMA on a 2-D block-cyclic layout: 2 -> 3 -> 4 -> 1 ranks (grids 1x2, 1x3, 2x2, 1x1), the fixed-size checksum", async () => {
    const want = await fixed([summa!, ...SUMMA]);
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", summa!, ...SUMMA, "--sleep-ms", "250"], /panel 1 on 2 ranks/);
    for (const n of [3, 4, 1]) {
      const a = await c.resize(job.id, n);
      if (a.state !== "COMMITTED") console.log(`resize to ${n}:`, JSON.stringify(a), JSON.stringify((await c.job(job.id)).events), job.output(), job.errors(), c.daemonLogs().slice(-8000));
      expect(a.state).toBe("COMMITTED");
    }
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err);
    expect(code).toBe(0);
    expect(out).toMatch(/resumed panel \d+ on 3 ranks \(1x3 grid, was 2 ranks\)/);
    expect(out).toMatch(/resumed panel \d+ on 4 ranks \(2x2 grid, was 3 ranks\)/);
    expect(out).toMatch(/resumed panel \d+ on 1 ranks \(1x1 grid, was 4 ranks\)/);
    expect(checksumOf(out)).toBe(want);
  }, 180_000);

  test("a restart that fails: the job ends FAILED saying why and where the checkpoint is, and the checkpoint resumes by hand to the right answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI_SHORT]);
    // The program cannot start at the new size: its restarted ranks (EBB_ADAPT_STATUS=joining) fail before ebb_init.
    const failing = ["sh", "-c", '[ "$EBB_ADAPT_STATUS" = joining ] && { echo "jacobi cannot start here" >&2; exit 3; }; exec "$0" "$@"'];
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", ...failing, jacobi!, ...JACOBI_SHORT, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
    expect(r.status).toBe(202);
    const { err, code } = await job.finished;
    expect(code).not.toBe(0);
    const from = /resume it with EBB_RESUME=(\S+)/.exec(err)?.[1];
    expect(err).toContain("the restart at 3 ranks failed");
    expect(from).toBe(join(c.dir, ".ebb-ckpt", `job-${job.id}`, `a${r.json.adaptationId}`));
    const end = await c.job(job.id);
    expect(end.state).toBe("FAILED");
    expect(end.reason).toContain("the restart at 3 ranks failed");
    const a = end.adaptations[0];
    expect([a.state, a.message]).toEqual(["FAILED", expect.stringContaining(`EBB_RESUME=${from}`)]);
    // The 2 ranks' checkpoint is intact (the staying node's part in /dev/shm, the other's in the directory): it resumes at any size.
    const kept = leftovers(c, job.id);
    expect([kept.some((f) => f.startsWith("ebb-ckpt-")), kept.some((f) => f.startsWith("/"))]).toEqual([true, true]);
    const again = await runProcess(["mpiexec", "-n", "3", jacobi!, ...JACOBI_SHORT], { env: { ...env, EBB_RESUME: from! } });
    expect(again.stdout).toMatch(/resumed iteration \d+ on 3 ranks \(was 2\)/);
    expect(checksumOf(again.stdout)).toBe(want);
    for (const f of kept) rmSync(f.startsWith("/") ? f : join(shmDir, f), { recursive: true, force: true });
  }, 180_000);

  test("a resize while the program never reaches a safe point times out (--adapt-timeout) and the job goes on to the right answer at its size", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    // The stall, far longer than the cluster's --adapt-timeout of 12 s, ends once the resize has ended.
    const pace = gateFile("pace-stall");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(pace), heldJacobi!, ...JACOBI, "--stall-at", "100", "--stall-ms", "60000", "--sleep-ms", "5"], /iteration 100 on 2 ranks/);
    const a = await c.resize(job.id, 4).finally(() => openGate(pace));
    expect(a.state).toBe("FAILED");
    expect(a.message).toMatch(/probe round 1: .* by the adaptation's deadline \(ebb controller --adapt-timeout\)/);
    expect((await c.job(job.id)).allocation.length).toBe(2);
    const { out, code } = await job.finished;
    expect(code).toBe(0);
    expect(out).not.toContain("resumed");
    expect(checksumOf(out)).toBe(want);
    expect((await c.job(job.id)).state).toBe("COMPLETED");
  }, 180_000);

  test("a controller restart while the world restarts: the step it restarted in is the job's elastic step afterwards (the next resize starts from it)", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    // The restarted ranks wait for a gate, so that the controller restarts after it granted their step and before they commit.
    const gate = join(work, `gate-${Date.now()}`);
    const gated = ["sh", "-c", `[ "$EBB_ADAPT_STATUS" = joining ] && while [ ! -e ${gate} ]; do sleep 0.1; done; exec "$0" "$@"`];
    const pace = gateFile("pace-controller");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(pace), "--", ...gated, heldJacobi!, ...JACOBI, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
    expect(r.status).toBe(202);
    await waitFor("the step to restart in", async () => (await c.job(job.id)).events.some((e: any) => e.kind === "restarting"), 60_000);
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    await openGate(gate);
    await waitFor("the restart to commit", async () => (await c.job(job.id)).adaptations[0]?.state !== "ADAPTING", 60_000);
    expect((await c.job(job.id)).adaptations[0].state).toBe("COMMITTED");
    await waitFor("the world of 3", () => /iteration \d+ on 3 ranks/.test(job.output()), 60_000);
    const shrink = await c.ebb(["resize", String(job.id), "--nodes", "2", "--wait"]);
    expect(shrink.code).toBe(0);
    await openGate(pace);
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-6000));
    expect(code).toBe(0);
    expect(out).toMatch(/resumed iteration \d+ on 3 ranks \(was 2\)/);
    expect(out).toMatch(/resumed iteration \d+ on 2 ranks \(was 3\)/);
    expect(checksumOf(out)).toBe(want);
    // Each adaptation started from the step the world ran in: 0, then the one it restarted in (1).
    const db = new Database(join(c.stateDir, "ebb.db"), { readonly: true });
    const steps = db.query("SELECT step_id AS s FROM adaptations WHERE job_id = ? ORDER BY id").all(job.id) as { s: number }[];
    db.close();
    expect(steps.map((x) => x.s)).toEqual([0, 1]);
    expect((await c.job(job.id)).state).toBe("COMPLETED");
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  /** A node's crash: its agent first (the launcher sees its link drop), then the ranks it ran. */
  async function crash(node: string): Promise<void> {
    const agent = c.agents.get(node)!;
    const ranks = commandLines().filter((p) => p.ppid === agent.pid);
    agent.kill("SIGKILL");
    await agent.exited;
    for (const p of ranks) process.kill(p.pid, "SIGKILL");
  }

  test("a node lost between periodic checkpoints: the job restarts on the survivors from the last one and gets the fixed-size answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    const pace = gateFile("pace-lost");
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", ...paced(pace), heldJacobi!, ...JACOBI, "--sleep-ms", "15", "--checkpoint-every", "60"], /iteration 150 on 3 ranks/);
    const victim = (await c.job(job.id)).allocation[2] as string;
    await crash(victim);
    // The survivors wait for the lost rank; the world that restarts need not be paced.
    await openGate(pace);
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-6000));
    expect(code).toBe(0);
    expect(out).toMatch(/resumed iteration (\d+) on 2 ranks \(was 3\)/);
    expect(Number(/resumed iteration (\d+)/.exec(out)![1]) % 60).toBe(59);
    expect(checksumOf(out)).toBe(want);
    const end = await c.job(job.id);
    expect(end.state).toBe("COMPLETED");
    const fault = end.adaptations[0];
    expect([fault.fromNodes, fault.toNodes, fault.removed, fault.state]).toEqual([3, 2, [victim], "COMMITTED"]);
    expect(err).toContain(`lost node ${victim}`);
    expect(leftovers(c, job.id)).toEqual([]);
    c.startAgent(victim);
    await c.waitNodes(4, "IDLE");
  }, 180_000);

  test("a node lost while the world writes a periodic checkpoint: the job restarts from the last complete one, and the incomplete one is removed (nothing left behind)", async () => {
    const want = await fixed([jacobi!, ...JACOBI_SHORT]);
    // Rank 0 holds inside the second periodic checkpoint (its part written, the manifest not yet); the run is paced until the gate opens.
    const gate = join(work, `gate-periodic-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", ...paced(gate), "--", "env", `EBB_TEST_HOLD_PERIODIC=${gate}`, heldJacobi!, ...JACOBI_SHORT, "--sleep-ms", "15", "--checkpoint-every", "60"], /iteration 100 on 3 ranks/);
    await waitFor("rank 0 to hold inside its second periodic checkpoint", () => existsSync(`${gate}.held`), 60_000);
    const victim = (await c.job(job.id)).allocation[2] as string;
    await crash(victim);
    await openGate(gate);
    const { out, err, code } = await job.finished;
    c.startAgent(victim);
    await c.waitNodes(4, "IDLE");
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-6000));
    expect(code).toBe(0);
    expect([...out.matchAll(/resumed iteration (\d+) on 2 ranks \(was 3\)/g)].map((m) => Number(m[1]))).toEqual([59]);
    expect(checksumOf(out)).toBe(want);
    expect((await c.job(job.id)).state).toBe("COMPLETED");
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test("a node that hangs and a surviving rank that fails before its loss is seen: the failure is held, and the controller's DOWN restarts the job from its last checkpoint", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    // Each rank is a shell running the program, so that a rank can fail as a program does (exit
    // 137, not a signal its agent would see as its node's ranks being lost).
    const shell = ["sh", "-c", '"$0" "$@"; exit $?'];
    const pace = gateFile("pace-hang");
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", ...paced(pace), "--", ...shell, heldJacobi!, ...JACOBI, "--sleep-ms", "15", "--checkpoint-every", "60"], /iteration 150 on 3 ranks/);
    const [, survivor, victim] = (await c.job(job.id)).allocation as string[];
    const programsOf = (node: string) => {
      const procs = commandLines();
      const shells = new Set(procs.filter((p) => p.ppid === c.agents.get(node)!.pid).map((p) => p.pid));
      return procs.filter((p) => shells.has(p.ppid) && p.cmd.includes(heldJacobi!)).map((p) => p.pid);
    };
    const [dying] = programsOf(survivor!);
    expect(dying).toBeDefined();
    // The order is forced: a stopped agent reports nothing and keeps its links open, so the launcher
    // hears of the node only from the controller, once it misses 3 heartbeats (of 1 s). A survivor
    // fails meanwhile, as its MPI does when a peer dies (over shared memory between the "nodes" of
    // one host, the survivors would wait instead: the test ends its program).
    const agent = c.agents.get(victim!)!;
    // Its ranks: the shells and the programs they run (a program whose shell alone were killed would spin on).
    const ranks = [...programsOf(victim!), ...commandLines().filter((p) => p.ppid === agent.pid).map((p) => p.pid)];
    process.kill(agent.pid, "SIGSTOP");
    for (const pid of ranks) process.kill(pid, "SIGKILL");
    await Bun.sleep(1000);
    process.kill(dying!, "SIGKILL");
    // The survivors wait for the lost rank; the world that restarts need not be paced.
    await openGate(pace);
    const { out, err, code } = await job.finished;
    agent.kill("SIGKILL");
    await agent.exited;
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-6000));
    expect(code).toBe(0);
    expect(err).toMatch(new RegExp(`rank 1 on ${survivor} exited with code 137; waiting up to \\d+ s for a node loss that explains it`));
    expect(out).toMatch(/resumed iteration (\d+) on 2 ranks \(was 3\)/);
    expect(checksumOf(out)).toBe(want);
    const end = await c.job(job.id);
    expect(end.state).toBe("COMPLETED");
    const fault = end.adaptations[0];
    expect([fault.fromNodes, fault.toNodes, fault.removed, fault.state]).toEqual([3, 2, [victim], "COMMITTED"]);
    expect(leftovers(c, job.id)).toEqual([]);
    c.startAgent(victim!);
    await c.waitNodes(4, "IDLE");
  }, 180_000);

  test("a rank that fails with no node lost: held for the grace, then the job ends FAILED as any MPI job does", async () => {
    const shell = ["sh", "-c", '"$0" "$@"; exit $?'];
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", ...shell, jacobi!, ...JACOBI, "--sleep-ms", "15", "--checkpoint-every", "60"], /iteration 50 on 2 ranks/);
    const node = (await c.job(job.id)).allocation[1] as string;
    const procs = commandLines();
    const shells = new Set(procs.filter((p) => p.ppid === c.agents.get(node)!.pid).map((p) => p.pid));
    const program = procs.find((p) => shells.has(p.ppid) && p.cmd.includes(jacobi!))!;
    process.kill(program.pid, "SIGKILL");
    const { err, code } = await job.finished;
    expect(code).not.toBe(0);
    expect(err).toMatch(new RegExp(`rank 1 on ${node} exited with code 137; waiting up to \\d+ s for a node loss that explains it`));
    const end = await c.waitJob(job.id, ["FAILED"]);
    expect(end.reason).toContain(`rank 1 on ${node} exited with code 137`);
    expect(end.adaptations).toEqual([]);
    rmSync(join(c.dir, ".ebb-ckpt", `job-${job.id}`), { recursive: true, force: true });
  }, 180_000);

  test("a node lost and no periodic checkpoint: the job ends NODE_FAIL saying it had nothing to restart from", async () => {
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", "--", jacobi!, ...JACOBI, "--sleep-ms", "15"], /iteration 50 on 3 ranks/);
    const victim = (await c.job(job.id)).allocation[1] as string;
    await crash(victim);
    const { code } = await job.finished;
    expect(code).not.toBe(0);
    const end = await c.waitJob(job.id, ["NODE_FAIL"]);
    expect(end.reason).toContain("nothing to restart from: the job took no periodic checkpoint");
    c.startAgent(victim);
    await c.waitNodes(4, "IDLE");
  }, 180_000);

  /**
   * Every node the job does not hold hangs (its agent stopped: its links stay open and it reports
   * nothing, so only the controller's heartbeats see it, DOWN after 3 of 1 s), so that a grow
   * decided now adds a node that is lost while the resize runs (docs/adaptation.md §12.3).
   */
  async function hangIdle(jobId: number): Promise<string[]> {
    const held = new Set((await c.job(jobId)).allocation as string[]);
    const idle = [...c.agents.keys()].filter((n) => !held.has(n));
    for (const n of idle) process.kill(c.agents.get(n)!.pid, "SIGSTOP");
    return idle;
  }

  async function revive(nodes: string[]): Promise<void> {
    for (const n of nodes) {
      const agent = c.agents.get(n)!;
      agent.kill("SIGKILL");
      await agent.exited;
      c.startAgent(n);
    }
    await c.waitNodes(4, "IDLE");
  }

  /**
   * Grows the job 2 -> 3 while every node it does not hold hangs (`hangIdle`), and opens its `pace`
   * gate once the grow has failed; its launcher's output once it ended well.
   */
  async function growWhileIdleHangs(job: { id: number; finished: Promise<{ out: string; err: string; code: number }> }, pace: string): Promise<{ out: string; err: string }> {
    const hung = await hangIdle(job.id);
    expect((await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 })).status).toBe(202);
    await waitFor("the grow to fail", async () => (await c.job(job.id)).adaptations[0]?.state === "FAILED", 60_000).finally(() => openGate(pace));
    const { out, err, code } = await job.finished;
    await revive(hung);
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-6000));
    expect(code).toBe(0);
    return { out, err };
  }

  /**
   * Starts held-jacobi with rank 0 holding inside the resize's write (and paced) until `gate` exists, grows it
   * 2 -> 3, crashes the added node while the write is held, and waits for the controller to fail the
   * grow and order the fault adaptation.
   */
  async function growHeldInWrite(gate: string) {
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(gate), "--", "env", `EBB_TEST_HOLD_WRITE=${gate}`, heldJacobi!, ...JACOBI_SHORT, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
    expect(r.status).toBe(202);
    await waitFor("rank 0 to hold inside its write", () => existsSync(`${gate}.held`), 60_000);
    const grow = (await c.job(job.id)).adaptations[0];
    expect(grow.state).toBe("ADAPTING");
    const added = grow.added[0] as string;
    await crash(added);
    await waitFor("the grow to fail and the fault adaptation to be ordered", async () => {
      const a = (await c.job(job.id)).adaptations;
      return a.length === 2 && a[0].state === "FAILED";
    }, 60_000);
    return { job, adaptationId: r.json.adaptationId as number, added };
  }

  /** Opens `gate`, waits for the launcher to end well, and brings the crashed `added` node back; the launcher's output. */
  async function openGateAndEnd(job: { finished: Promise<{ out: string; err: string; code: number }> }, gate: string, added: string): Promise<{ out: string; err: string }> {
    await openGate(gate);
    const { out, err, code } = await job.finished;
    c.startAgent(added);
    await c.waitNodes(4, "IDLE");
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-6000));
    expect(code).toBe(0);
    return { out, err };
  }

  /** The grow 2 -> 3 failed for the node it added, and a fault adaptation removing nothing committed. */
  function expectAddedLost(end: any): void {
    expect(end.state).toBe("COMPLETED");
    expect(end.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.removed, a.state])).toEqual([
      [2, 3, [], "FAILED"],
      [2, 2, [], "COMMITTED"],
    ]);
    expect(end.adaptations[0].message).toMatch(/^aborted: node \S+ failed/);
  }

  test("a grow whose added node is lost during its probe rounds (the ranks stall before a safe point): the resize fails, the fault adaptation removes nothing, and the world goes on at its size without a restart", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    // No periodic checkpoint: a world stopped for this loss would have nothing to restart from.
    // The stall lasts until the grow has failed (at most 60 s, far longer than the --adapt-timeout of 12 s).
    const pace = gateFile("pace-probe");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(pace), heldJacobi!, ...JACOBI, "--stall-at", "100", "--stall-ms", "60000", "--sleep-ms", "5"], /iteration 100 on 2 ranks/);
    const { out } = await growWhileIdleHangs(job, pace);
    expect(out).not.toContain("resumed");
    expect(checksumOf(out)).toBe(want);
    expectAddedLost(await c.job(job.id));
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test("a grow whose added node is lost while the world restarts for it (the old ranks ended): the world restarts on its old nodes from the resize's own checkpoint, the fixed-size answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    // No periodic checkpoint: the resize's is the only one there is.
    const pace = gateFile("pace-restart");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(pace), heldJacobi!, ...JACOBI, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    const { out, err } = await growWhileIdleHangs(job, pace);
    expect(out).toMatch(/resumed iteration \d+ on 2 ranks \(was 2\)/);
    expect(out).not.toMatch(/on 3 ranks/);
    expect(err).toMatch(/the world restarts on its nodes from the resize's checkpoint \S+\/a\d+/);
    expect(checksumOf(out)).toBe(want);
    expectAddedLost(await c.job(job.id));
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test("a grow whose added node crashes while the restarted ranks start there: the launcher reports it, and the world restarts on its old nodes from the resize's own checkpoint, the fixed-size answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI]);
    // Restarted ranks wait for a gate, so that the added node crashes while they start, before any read the checkpoint; the run is paced until then.
    const gate = join(work, `gate-added-${Date.now()}`);
    const gated = ["sh", "-c", `[ "$EBB_ADAPT_STATUS" = joining ] && while [ ! -e ${gate} ]; do sleep 0.1; done; exec "$0" "$@"`];
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(gate), "--", ...gated, heldJacobi!, ...JACOBI, "--sleep-ms", "15"], /iteration 50 on 2 ranks/);
    expect((await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 })).status).toBe(202);
    await waitFor("the step to restart in", async () => (await c.job(job.id)).events.some((e: any) => e.kind === "restarting"), 60_000);
    const added = (await c.job(job.id)).allocation[2] as string;
    await waitFor("the restarted rank on the added node", () => commandLines().some((p) => p.ppid === c.agents.get(added)!.pid), 60_000);
    await crash(added);
    const { out, err } = await openGateAndEnd(job, gate, added);
    expect(err).toContain(`node ${added}, which the resize added, was lost`);
    expect(out).toMatch(/resumed iteration \d+ on 2 ranks \(was 2\)/);
    expect(out).not.toMatch(/on 3 ranks/);
    expect(checksumOf(out)).toBe(want);
    expectAddedLost(await c.job(job.id));
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test("a grow whose added node crashes while its write window is open (rank 0 holds inside its write): the write runs to its outcome, the old ranks end, and the world restarts on its old nodes from the resize's own checkpoint, the fixed-size answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI_SHORT]);
    const gate = join(work, `gate-write-${Date.now()}`);
    // No periodic checkpoint: the resize's is the only one there is.
    const { job, adaptationId, added } = await growHeldInWrite(gate);
    const { out, err } = await openGateAndEnd(job, gate, added);
    expect(out).toMatch(/resumed iteration \d+ on 2 ranks \(was 2\)/);
    expect(out).not.toMatch(/on 3 ranks/);
    expect(err).toContain(`the world restarts on its nodes from the resize's checkpoint ${join(c.dir, ".ebb-ckpt", `job-${job.id}`, `a${adaptationId}`)}`);
    expect(checksumOf(out)).toBe(want);
    expectAddedLost(await c.job(job.id));
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);

  test("a grow whose added node crashes while its write window is open, and the write then fails: the window closes and the world goes on at its size, no restart, the fixed-size answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI_SHORT]);
    const gate = join(work, `gate-write-fails-${Date.now()}`);
    const { job, adaptationId, added } = await growHeldInWrite(gate);
    // Rank 0 cannot write the manifest: a file stands where the checkpoint's directory was.
    const dir = join(c.dir, ".ebb-ckpt", `job-${job.id}`, `a${adaptationId}`);
    rmSync(dir, { recursive: true, force: true });
    await Bun.write(dir, "");
    const { out, err } = await openGateAndEnd(job, gate, added);
    expect(err).toContain("jacobi: the resize failed, going on");
    expect(out).not.toContain("resumed");
    expect(out).toMatch(/iteration \d+ on 2 ranks\n[^]*checksum/);
    expect(checksumOf(out)).toBe(want);
    expectAddedLost(await c.job(job.id));
    // The ranks removed their parts; the file the test put stays (and the job's directory with it).
    expect(leftovers(c, job.id)).toEqual([join(c.dir, ".ebb-ckpt", `job-${job.id}`)]);
    rmSync(join(c.dir, ".ebb-ckpt", `job-${job.id}`), { recursive: true, force: true });
  }, 180_000);

  test("a grow whose added node crashes after the restarted ranks read the resize's checkpoint and removed it: the world restarts on its old nodes from its newest periodic checkpoint, the fixed-size answer", async () => {
    const want = await fixed([jacobi!, ...JACOBI_SHORT]);
    const gate = join(work, `gate-read-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced(gate), "--", "env", `EBB_TEST_HOLD_READ=${gate}`, heldJacobi!, ...JACOBI_SHORT, "--sleep-ms", "15", "--checkpoint-every", "60"], /iteration 150 on 2 ranks/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
    expect(r.status).toBe(202);
    const spent = join(c.dir, ".ebb-ckpt", `job-${job.id}`, `a${r.json.adaptationId}`);
    // The restarted rank on the added node holds once every part was read and removed; rank 0 then removes the manifest. The run is paced until the gate opens.
    await waitFor("the resize's checkpoint read and removed, a restarted rank held", () => existsSync(`${gate}.held`) && !existsSync(spent), 60_000);
    const added = (await c.job(job.id)).adaptations[0].added[0] as string;
    await crash(added);
    const { out, err } = await openGateAndEnd(job, gate, added);
    expect(err).toContain(`node ${added}, which the resize added, was lost`);
    expect(err).not.toContain("the world restarts on its nodes from the resize's checkpoint");
    expect(err).toContain(`the resize's checkpoint ${spent} was read and removed; the world restarts on its nodes from its last periodic checkpoint ${join(c.dir, ".ebb-ckpt", `job-${job.id}`)}/p`);
    // One restart, from a periodic checkpoint (taken every 60 safe points from iteration 0: after iteration 59, 119, ...).
    const resumed = [...out.matchAll(/resumed iteration (\d+) on (\d+) ranks \(was (\d+)\)/g)].map((m) => [Number(m[1]) % 60, Number(m[2]), Number(m[3])]);
    expect(resumed).toEqual([[59, 2, 2]]);
    expect(checksumOf(out)).toBe(want);
    expectAddedLost(await c.job(job.id));
    expect(leftovers(c, job.id)).toEqual([]);
  }, 180_000);
});

describe.skipIf(!jacobi)("resized by the scheduler", () => {
  beforeAll(async () => {
    // Thresholds far from what the job measures either way: 2 ranks sharing 2 cores spend a few
    // percent or more of their time communicating (under a loaded CI, sometimes only 3 %, which the
    // default upper of 0.1 holds), 1 rank nothing at all. The cluster's controller starts again with
    // them (startController takes the cluster's options); its agents reconnect by themselves.
    c.opts.controllerArgs = ["--policy", "ers", "--ers-interval", "1", "--settle", "1", "--min-samples", "2", "--sample-interval", "1", "--upper", "0.005", "--lower", "0.001"];
    c.controller.kill("SIGTERM");
    await c.controller.exited;
    await c.startController();
    await c.waitNodes(4, "IDLE");
  });

  test("the scheduler halves the job while its communication share is high (2 ranks sharing 2 cores) and doubles it when low (1 rank): the fixed-size answer", async () => {
    const shape = ["--n", "160", "--iters", "1800", "--every", "100"];
    const args = [...shape, "--sleep-ms", "20"];
    const want = await fixed([jacobi!, ...shape]); // the sleep paces the elastic run only: same answer
    // Paced until the scheduler has shrunk and grown it, at full speed after.
    const pace = gateFile("pace-scheduler");
    const id = await c.submit({ argv: [heldJacobi!, ...args], env: { EBB_TEST_PACE: pace }, nodes: 2, elastic: true, minNodes: 1, maxNodes: 2, sampleInterval: 1, timeLimit: 600 });
    const both = (j: any) => {
      const sizes = j.adaptations.filter((a: any) => a.state === "COMMITTED").map((a: any) => a.toNodes - a.fromNodes);
      return sizes.includes(-1) && sizes.includes(1);
    };
    await waitFor("the scheduler to shrink and grow the job", async () => both(await c.job(id)), 120_000)
      .catch(async (e) => {
        const j = await c.job(id);
        console.log(JSON.stringify(j.samples), j.events.map((x: any) => `${x.kind}: ${x.message}`).join("\n"));
        throw e;
      })
      .finally(() => openGate(pace));
    const end = await c.waitJob(id, ["COMPLETED", "FAILED"], 120_000);
    expect(end.state).toBe("COMPLETED");
    expect(end.adaptations.every((a: any) => a.reason.startsWith("scheduler"))).toBe(true);
    const out = c.read(end.output);
    expect(out).toMatch(/resumed iteration \d+ on 1 ranks \(was 2\)/);
    expect(out).toMatch(/resumed iteration \d+ on 2 ranks \(was 1\)/);
    expect(checksumOf(out)).toBe(want);
  }, 240_000);
});
