/**
 * Two real users on one node, the agent root: what one user's job can do to the agent's thread,
 * which serves every job on the node.
 *
 * - A file system that never answers (a FUSE mount whose daemon reads nothing: the kernel's every
 *   request on it waits), named by his jobs. Unfixed: the agent's thread waited in open(2) of the
 *   job's output file (or stat of its directory, or of its program on PATH), its heartbeats
 *   stopped, the node went DOWN and her job NODE_FAIL. Now each of his fails alone, naming the
 *   path; the node stays up and her jobs run, the one already running and one submitted meanwhile.
 * - His rank flooding its PMI server with valid requests while she has a job on the node: paced at
 *   PMI_BYTES_PER_SECOND (all his ranks on the node together, each request counting
 *   PMI_REQUEST_COST bytes more), the agent pausing its reads and saying so; nothing of his is
 *   lost, and her step's PMI is served meanwhile. Alone on the node, he is not paced.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { commandLines, startCluster, type TestCluster, waitFor } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";
import { PATH_ANSWER_SECONDS } from "../../src/roles/agent/path-probe.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
const ENDED = ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT"];
let c: TestCluster;
let base: string;
let hung: string;
/** Holds /dev/fuse open (fd 3) and never reads it: the mount at `hung` answers nothing while it lives. */
let daemon: Subprocess | undefined;
const tokens: Record<string, string> = {};
let bobUid = 0;

beforeAll(async () => {
  expect(process.getuid!()).toBe(0);
  base = mkdtempSync(join(tmpdir(), "ebb-hung-fs-"));
  chmodSync(base, 0o755);
  for (const u of USERS) {
    const uid = ensureUser(u);
    if (u === "ebbt_bob") bobUid = uid;
    mkdirSync(join(base, u), { mode: 0o700 });
    chownSync(join(base, u), uid, uid);
  }
  hung = join(base, "ebbt_bob", "hung");
  mkdirSync(hung);
  daemon = Bun.spawn(["/bin/sh", "-c", `exec 3<>/dev/fuse && mount -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0,allow_other ebb-hung "$0" && exec sleep 100000`, hung], { stdout: "ignore", stderr: "inherit" });
  await waitFor("the FUSE mount", () => readFileSync("/proc/self/mountinfo", "utf8").includes(` ${hung} `), 10_000);
  c = await startCluster({ agents: 0, cpus: 8, heartbeat: 1 });
  c.startAgent("node01");
  await c.waitNodes(1, "IDLE", 90_000);
  for (const u of USERS) tokens[u] = (await c.api("POST", "/v1/tokens", { user: u })).json.token;
});
afterAll(async () => {
  // The mount first: nothing below may walk into it.
  if (hung) Bun.spawnSync(["umount", "-l", hung]);
  daemon?.kill("SIGKILL");
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

const submitAs = (user: string, body: Record<string, unknown>) => c.submit({ cwd: join(base, user), ...body }, tokens[user]!);

test("a path on a file system that never answers fails only the job naming it (output file, error file, directory, program): the node stays UP, her running job runs on and her new one completes", async () => {
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "300"], output: "alice-sleep.out" });
  await c.waitJob(alices, ["RUNNING"]);
  const within = `did not answer within ${PATH_ANSWER_SECONDS} s`;
  const attacks = [
    [{ script: "#!/bin/sh\necho x\n", output: join(hung, "out") }, `output file ${join(hung, "out")} ${within}`],
    [{ script: "#!/bin/sh\necho x\n", output: "ok-%j.out", error: join(hung, "err") }, `error file ${join(hung, "err")} ${within}`],
    [{ argv: ["echo", "x"], cwd: hung }, `working directory ${hung} ${within}`],
    [{ argv: [join(hung, "prog")], output: "ok-%j.out" }, `program ${join(hung, "prog")} ${within}`],
    [{ argv: ["prog"], output: "ok-%j.out", env: { PATH: `/usr/bin:${hung}:/bin` } }, `program prog: PATH directory ${join(hung, "prog")} ${within}`],
  ] as const;
  const bobs = await Promise.all(attacks.map(([body]) => submitAs("ebbt_bob", body)));
  // While his paths hang: her job submitted now starts, runs and completes.
  const hers = await submitAs("ebbt_alice", { argv: ["echo", "hers"], output: "alice-echo.out" });
  expect((await c.waitJob(hers, ENDED, 60_000)).state).toBe("COMPLETED");
  expect(readFileSync(join(base, "ebbt_alice", "alice-echo.out"), "utf8")).toBe("hers\n");
  for (const [i, id] of bobs.entries()) {
    const end = await c.waitJob(id, ENDED, 60_000);
    expect({ body: attacks[i]![0], state: end.state, reason: end.reason }).toEqual({ body: attacks[i]![0], state: "FAILED", reason: expect.stringContaining(attacks[i]![1]) });
  }
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  expect({ node: node.state, alice: (await c.job(alices)).state }).toEqual({ node: expect.stringMatching(/^(IDLE|MIXED|ALLOCATED)$/), alice: "RUNNING" });
  await c.api("DELETE", `/v1/jobs/${alices}`);
  await c.waitJob(alices, ENDED, 60_000);
}, 120_000);

test("his killing his own look-up processes while a path of his hangs fails his job, not the node: the agent's thread never touches the path nobody vouched for", async () => {
  const id = await submitAs("ebbt_bob", { script: "#!/bin/sh\necho x\n", output: join(hung, "killed") });
  // He may kill every process of his, the kept look-up and the one spawned after it among them.
  const killer = Bun.spawn(["/bin/sh", "-c", "end=$(($(date +%s) + 6)); while [ $(date +%s) -lt $end ]; do pkill -9 -u ebbt_bob -x sh; sleep 0.05; done"]);
  const end = await c.waitJob(id, ENDED, 60_000);
  killer.kill("SIGKILL");
  expect({ state: end.state, reason: end.reason }).toEqual({ state: "FAILED", reason: expect.stringMatching(new RegExp(`output file ${join(hung, "killed")} (could not be looked up|did not answer)`)) });
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  expect(node.state).toMatch(/^(IDLE|MIXED|ALLOCATED)$/);
}, 120_000);

test("his rank flooding its PMI server is paced while she has a job on the node: the agent pauses reading him, says so naming the limit, loses nothing of his; her step's PMI is served meanwhile. Alone on the node he is not paced", async () => {
  const flooder = join(import.meta.dir, "../pmi/fixtures/pmi-flooder.ts");
  const run = (until: number | string, out: string, line = "") => `#!/bin/sh\nebb run -n 1 ${process.execPath} ${flooder} ${until} ${line} > ${out}\n`;
  const paused = "pausing PMI reads of ebbt_bob's ranks";
  // Alone: past his pace (the agent says so) and read on, never paused.
  const readOn = "ebbt_bob's ranks send this node's PMI servers more than";
  const stopAlone = join(base, "ebbt_bob", "alone-stop");
  const alone = await submitAs("ebbt_bob", { script: run(stopAlone, "alone.out", "cmd=get_maxes"), output: "alone-job.out" });
  await waitFor("the agent to say he is past his pace, alone", () => c.daemonLogs().includes(readOn), 60_000);
  writeFileSync(stopAlone, "");
  expect((await c.waitJob(alone, ENDED, 60_000)).state).toBe("COMPLETED");
  const aloneSaid = JSON.parse(readFileSync(join(base, "ebbt_bob", "alone.out"), "utf8"));
  expect(aloneSaid.replies === aloneSaid.sent && aloneSaid.sent > 0).toBe(true);
  expect(c.daemonLogs()).not.toContain(paused);
  // Unfixed: the agent read and answered his rank as fast as it wrote, on the thread that serves every job's PMI on the node.
  const hersFirst = await submitAs("ebbt_alice", { argv: ["sleep", "300"], output: "alice-sleep2.out" });
  await c.waitJob(hersFirst, ["RUNNING"]);
  // Valid 14-byte gets as fast as he is read, until told to stop: past his burst he is read at PMI_BYTES_PER_SECOND.
  const stop = join(base, "ebbt_bob", "flood-stop");
  const bobs = await submitAs("ebbt_bob", { script: run(stop, "flood.out", "cmd=get_maxes"), output: "flood-job.out" });
  await waitFor("the agent to pause his reads", () => c.daemonLogs().includes(paused), 60_000);
  const alices = await submitAs("ebbt_alice", { script: run(100, "pmi.out"), output: "pmi-job.out" });
  expect((await c.waitJob(alices, ENDED, 60_000)).state).toBe("COMPLETED");
  writeFileSync(stop, "");
  expect((await c.waitJob(bobs, ENDED, 60_000)).state).toBe("COMPLETED");
  await c.api("DELETE", `/v1/jobs/${hersFirst}`);
  const said = (user: string, file: string) => JSON.parse(readFileSync(join(base, user, file), "utf8"));
  const [his, hers] = [said("ebbt_bob", "flood.out"), said("ebbt_alice", "pmi.out")];
  expect({ his: his.replies === his.sent && his.sent > 0, hers: hers.replies === hers.sent && hers.sent > 0 }).toEqual({ his: true, hers: true });
  const line = c.daemonLogs().split("\n").find((l) => l.includes(paused))!;
  expect(line).toContain("(PMI_BYTES_PER_SECOND, PMI_BURST_BYTES;");
  expect(c.daemonLogs()).not.toContain("pausing PMI reads of ebbt_alice's");
}, 180_000);

test("his answering his own look-ups (empty lines into his look-up processes' stdout, taken with pidfd_getfd) while his output and error paths hang: only his job waits, in his own process (a batch script's first, a command job's writer); the node stays UP and her jobs run", async () => {
  // Unfixed: the look-up took his forged lines for answers, the agent's thread opened the path that
  // hangs, its heartbeats stopped, the node went DOWN and her running job NODE_FAIL. Now the files
  // are opened by his job's own process after the drop (output-after-drop.ts): it waits, nothing else.
  await forgedAnswersWaitAlone(
    [
      [{ script: "#!/bin/sh\necho x\n", output: join(hung, "forged-out") }, join(hung, "forged-out")],
      [{ script: "#!/bin/sh\necho x\n", output: "forged-%j.out", error: join(hung, "forged-err") }, join(hung, "forged-err")],
      [{ argv: ["echo", "x"], output: join(hung, "forged-cmd-out") }, join(hung, "forged-cmd-out")],
      [{ argv: ["echo", "x"], output: "forged-%j.out", error: join(hung, "forged-cmd-err") }, join(hung, "forged-cmd-err")],
    ],
    3,
  );
}, 180_000);

test("his forged answers for a directory or a program that hangs (a batch or command job's directory, a program by path or on PATH): only his job waits, in his own process; the agent's thread neither checks, enters, stats, reads nor executes them, the node stays UP and her jobs run", async () => {
  // Unfixed: the agent's thread looked at the directory (existsSync), the MPI check stat'ed and
  // read the program, the direct drop chdir'd into the directory and stat'ed the program, and its
  // spawn (a vfork: the parent waits until the child has executed) executed the program itself:
  // each waited on his hung path, the heartbeats stopped, the node went DOWN and her job NODE_FAIL.
  const out = join(base, "ebbt_bob", "forged-dir-%j.out");
  await forgedAnswersWaitAlone(
    [
      [{ script: "#!/bin/sh\necho x\n", cwd: hung, output: out }, hung],
      [{ argv: ["echo", "x"], cwd: hung, output: out }, hung],
      [{ argv: [join(hung, "forged-prog")], output: out }, join(hung, "forged-prog")],
      [{ argv: ["forged-on-path"], output: out, env: { PATH: `${hung}:/usr/bin:/bin` } }, "forged-on-path"],
    ],
    4,
  );
}, 180_000);

test("his hung mounts on his step's node-shared files (its CFG directory, its adaptation segment) fail nothing but his monitoring: the agent reads and removes them without leaving /dev/shm's file system; the node stays UP and her jobs run", async () => {
  // Unfixed: the agent's thread, reading his ranks' CFG tables (every sampling interval, and at the
  // step's end) or removing the directory and his adaptation segment, walked into his mount (the
  // directory and the file are his: he may mount on them, an allow_other mount as this file's): its
  // heartbeats stopped, the node went DOWN and her job NODE_FAIL.
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "300"], output: "alice-sleep5.out" });
  await c.waitJob(alices, ["RUNNING"]);
  const mounts: { path: string; daemon: Subprocess }[] = [];
  /** A FUSE mount of his on `path` (a directory or a file) whose daemon answers nothing. */
  const hang = async (path: string, dir: boolean) => {
    const daemon = Bun.spawn(["/bin/sh", "-c", `exec 3<>/dev/fuse && mount -t fuse -o fd=3,rootmode=${dir ? 40000 : 100000},user_id=${bobUid},group_id=${bobUid},allow_other ebb-hung "$0" && exec sleep 100000`, path], { stdout: "ignore", stderr: "inherit" });
    mounts.push({ path, daemon });
    await waitFor(`the FUSE mount on ${path}`, () => readFileSync("/proc/self/mountinfo", "utf8").includes(` ${path} `), 10_000);
  };
  const shm = () => readdirSync("/dev/shm");
  const upAndServing = async (running: number | undefined, out: string) => {
    const hers = await submitAs("ebbt_alice", { argv: ["echo", "hers"], output: out });
    expect((await c.waitJob(hers, ENDED, 60_000)).state).toBe("COMPLETED");
    const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
    expect({ node: node.state, alice: running === undefined ? "none" : (await c.job(running)).state }).toEqual({ node: expect.stringMatching(/^(IDLE|MIXED|ALLOCATED)$/), alice: running === undefined ? "none" : "RUNNING" });
  };
  try {
    // His step's tables are read every 0.2 s while his mount hangs, and once more at its end, when the directory is removed.
    const plain = await submitAs("ebbt_bob", { argv: ["sleep", "300"], output: "cfg-mount.out", sampleInterval: 0.2 });
    await c.waitJob(plain, ["RUNNING"]);
    const cfgDir = await waitFor("his CFG directory", () => shm().find((n) => n.startsWith(`ebb-cfg-node01-${plain}.0.`)), 30_000);
    await hang(join("/dev/shm", cfgDir), true);
    await upAndServing(alices, "alice-echo5.out");
    await c.api("DELETE", `/v1/jobs/${plain}`);
    expect((await c.waitJob(plain, ENDED, 60_000)).state).toBe("CANCELLED");
    await upAndServing(alices, "alice-echo6.out");
    // An elastic job holds the node whole: hers waits for its end, when his segment is removed.
    await c.api("DELETE", `/v1/jobs/${alices}`);
    await c.waitJob(alices, ENDED, 60_000);
    const elastic = await submitAs("ebbt_bob", { argv: ["sleep", "300"], output: "adapt-mount.out", elastic: true, minNodes: 1, maxNodes: 1 });
    await c.waitJob(elastic, ["RUNNING"]);
    const segment = await waitFor("his adaptation segment", () => shm().find((n) => n.startsWith(`ebb-adapt-node01-${elastic}.0.`)), 30_000);
    await hang(join("/dev/shm", segment), false);
    await c.api("DELETE", `/v1/jobs/${elastic}`);
    expect((await c.waitJob(elastic, ENDED, 60_000)).state).toBe("CANCELLED");
    await upAndServing(undefined, "alice-echo7.out");
  } finally {
    for (const m of mounts) {
      Bun.spawnSync(["umount", "-l", m.path]);
      m.daemon.kill("SIGKILL");
      rmSync(m.path, { recursive: true, force: true });
    }
    await c.api("DELETE", `/v1/jobs/${alices}`);
    await c.waitJob(alices, ENDED, 60_000);
  }
}, 180_000);

test("his writing bytes that are no answer into his look-up processes' output (pidfd_getfd) fails his job as soon as they are more than its answers can be: the agent's thread stops reading them", async () => {
  // Unfixed: the agent read every byte he wrote, on the thread that serves every job on the node,
  // until the look-up's 10 s were up (then his job failed as not answering): as many look-ups at
  // once as he starts jobs, each as fast as a pipe carries.
  const forger = Bun.spawn(["setpriv", `--reuid=${bobUid}`, `--regid=${bobUid}`, "--clear-groups", "--", process.execPath, join(import.meta.dir, "fixtures/look-up-forger.ts"), "junk"], { cwd: "/", stdio: ["ignore", "ignore", "inherit"] });
  try {
    const id = await submitAs("ebbt_bob", { script: "#!/bin/sh\necho x\n", output: join(hung, "junk") });
    const end = await c.waitJob(id, ENDED, 60_000);
    expect({ state: end.state, reason: end.reason }).toEqual({ state: "FAILED", reason: expect.stringMatching(/could not be looked up: the look-up process, as the job's user, wrote more than the \d+ bytes its answers take/) });
    const hers = await submitAs("ebbt_alice", { argv: ["echo", "hers"], output: "alice-echo8.out" });
    expect((await c.waitJob(hers, ENDED, 60_000)).state).toBe("COMPLETED");
  } finally {
    forger.kill("SIGKILL");
    Bun.spawnSync(["pkill", "-9", "-u", "ebbt_bob", "-x", "sh"]);
  }
}, 120_000);

/**
 * With his forger answering his look-ups, his jobs (each a body and the path it hangs on) get as far
 * as a shell of his that waits on the hung path, or end; hers run beside them, the node stays UP.
 * `n` numbers her job's output files.
 */
async function forgedAnswersWaitAlone(attacks: readonly (readonly [Record<string, unknown>, string])[], n: number): Promise<void> {
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "300"], output: `alice-sleep${n}.out` });
  await c.waitJob(alices, ["RUNNING"]);
  const forger = Bun.spawn(["setpriv", `--reuid=${bobUid}`, `--regid=${bobUid}`, "--clear-groups", "--", process.execPath, join(import.meta.dir, "fixtures/look-up-forger.ts")], { cwd: "/", stdio: ["ignore", "ignore", "inherit"] });
  try {
    const bobs = await Promise.all(attacks.map(([body]) => submitAs("ebbt_bob", body)));
    const waiting = (path: string) => commandLines().some((p) => p.cmd.includes(path) && p.cmd.startsWith("/bin/sh -c"));
    const got = await Promise.all(
      bobs.map((id, i) => waitFor(`his job ${id} to start its process or end`, async () => (waiting(attacks[i]![1]) ? "waiting" : ENDED.includes((await c.job(id)).state) && (await c.job(id)).state), 60_000)),
    );
    // His forged answers were taken (else the look-up failed his job, as before).
    expect({ got, why: await Promise.all(bobs.map(async (id) => (await c.job(id)).reason)) }).toEqual({ got: bobs.map(() => "waiting"), why: bobs.map(() => null) });
    const hers = await submitAs("ebbt_alice", { argv: ["echo", "hers"], output: `alice-echo${n}.out` });
    expect((await c.waitJob(hers, ENDED, 60_000)).state).toBe("COMPLETED");
    const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
    expect({ node: node.state, alice: (await c.job(alices)).state, bob: await Promise.all(bobs.map(async (id) => (await c.job(id)).state)) }).toEqual({ node: expect.stringMatching(/^(IDLE|MIXED|ALLOCATED)$/), alice: "RUNNING", bob: bobs.map(() => "RUNNING") });
    for (const id of bobs) await c.api("DELETE", `/v1/jobs/${id}`);
    for (const id of bobs) expect((await c.waitJob(id, ENDED, 60_000)).state).toBe("CANCELLED");
  } finally {
    forger.kill("SIGKILL");
    // His look-up processes his forged lines left waiting on the hung paths would take his next look-ups (and fail them): his own doing, undone here for the tests after this one.
    Bun.spawnSync(["pkill", "-9", "-u", "ebbt_bob", "-x", "sh"]);
    await c.api("DELETE", `/v1/jobs/${alices}`);
    // The next test's user must be alone on the node: nothing of this one's jobs left on it.
    await c.waitJob(alices, ENDED, 60_000);
    await c.waitNodes(1, "IDLE", 60_000);
  }
}

