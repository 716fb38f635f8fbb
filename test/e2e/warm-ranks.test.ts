/**
 * Warm ranks (`ebb agent --warm-ranks`, default 1): a rank run as `ebb exec FILE` takes one of its
 * agent's pre-started processes instead of starting cold. Two agents as root, a real user
 * (useradd): a claimed warm rank runs as the job's user (every id, its groups, every thread, no
 * capabilities), in the job's cgroups, with the job's environment and nothing of the agent's; a
 * grow's joining rank comes from the pool and the job gets the right answer; the pool refills;
 * and what a cold start refuses the user, a warm one refuses too.
 */
import { USER_PROCS } from "../../src/roles/user-procs.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandLines, pidAlive, ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";

const USER = "ebbt_alice";
/** In the agents' environment: a job must never see it (a cold start's baseEnv drops EBB_*; a warm rank starts with nothing). */
const AGENT_SECRET = "agent-secret-marker";
let c: TestCluster;
let base: string;
let home: string;
let rootOnly: string;
let marks: string;
let uid: number;
let token: string;

/** From inside a rank: the files of its agent's cgroups it could write (none may be), and how many there are (root-attacks.test.ts's check). */
const CGROUP_FILES = `me=$(grep -o 'ebb-agent-[^/]*/job-[0-9]*' /proc/self/cgroup | head -1); n=0; for f in $(find /sys/fs/cgroup -path "*/\${me%/job-*}/*" -type f 2>/dev/null); do n=$((n+1)); [ -w "$f" ] && echo "writable $f"; done; echo "files=$n"`;

/** What a rank sees of itself. */
const PROBE = `const CGROUP_FILES = ${JSON.stringify(CGROUP_FILES)};
import { readFileSync, readdirSync, statSync } from "node:fs";
const status = (task) => readFileSync(\`/proc/self/task/\${task}/status\`, "utf8");
const field = (s, name) => new RegExp(\`^\${name}:\\\\s+(.*)$\`, "m").exec(s)[1].trim();
const threads = readdirSync("/proc/self/task").map((t) => ({ uid: field(status(t), "Uid"), gid: field(status(t), "Gid"), capEff: field(status(t), "CapEff"), capPrm: field(status(t), "CapPrm") }));
console.log(JSON.stringify({
  pid: process.pid,
  warm: readFileSync("/proc/self/cmdline", "utf8").includes("warm-rank"),
  uid: process.getuid(), euid: process.geteuid(), gid: process.getgid(), egid: process.getegid(), groups: process.getgroups().sort((a, b) => a - b),
  threads,
  cgroup: readFileSync("/proc/self/cgroup", "utf8"),
  job: process.env.SLURM_JOB_ID,
  cwd: process.cwd(),
  env: process.env,
  kernelEnviron: readFileSync("/proc/self/environ", "utf8").split("\\0").filter(Boolean),
  environOwner: statSync("/proc/self/environ").uid,
  maxProcs: /^Max processes\\s+(\\d+)\\s+(\\d+)/m.exec(readFileSync("/proc/self/limits", "utf8")).slice(1).join(" "),
  child: Bun.spawnSync(["/bin/sh", "-c", "echo $MARKER"]).stdout.toString().trim(),
  cgroupFiles: Bun.spawnSync(["/bin/sh", "-c", CGROUP_FILES]).stdout.toString().trim(),
}));
`;

/** Grows from 1 to 2 ranks; then says which ranks were warm and the sum of rank+1 over the world. */
const GROW = `
import { adaptBegin, adaptCommit, finalizeAdapt, initAdapt, probeAdapt } from "ebb/comm";
import { readFileSync } from "node:fs";
const warm = readFileSync("/proc/self/cmdline", "utf8").includes("warm-rank");
let { world, status } = await initAdapt();
console.log(\`ready rank=\${world.rank} status=\${status}\`);
async function adapt() {
  await adaptBegin();
  world = (await adaptCommit()) ?? process.exit(0);
}
if (status === "joining") await adapt();
while (world.size < 2) {
  if ((await probeAdapt()).pending) await adapt();
  else await Bun.sleep(20);
}
const sum = await world.allreduce(world.rank + 1, "sum");
const warmRanks = await world.allgather(warm ? 1 : 0);
if (world.rank === 0) console.log(\`sum=\${sum} warm=\${warmRanks.join(",")}\`);
await finalizeAdapt();
`;

beforeAll(async () => {
  expect(process.getuid!()).toBe(0); // root agents: the warm ranks must drop to the job's user
  uid = ensureUser(USER);
  base = mkdtempSync(join(tmpdir(), "ebb-warm-"));
  chmodSync(base, 0o755);
  home = join(base, USER);
  mkdirSync(home, { mode: 0o700 });
  chownSync(home, uid, uid);
  rootOnly = join(base, "root-only");
  mkdirSync(rootOnly, { mode: 0o700 });
  marks = join(base, "marks");
  mkdirSync(marks);
  chmodSync(marks, 0o1777);
  writeFileSync(join(base, "probe.ts"), PROBE, { mode: 0o644 });
  writeFileSync(join(base, "grow.ts"), GROW, { mode: 0o644 });
  writeFileSync(join(rootOnly, "prog.ts"), `require("node:fs").writeFileSync("${marks}/ran-" + process.pid, String(process.getuid()));\n`, { mode: 0o644 });
  c = await startCluster({ agents: 2, agentEnv: { EBB_CLUSTER_KEY: AGENT_SECRET } });
  const r = await c.ebb(["token", "create", "--user", USER]);
  expect(r.code).toBe(0);
  token = r.stdout.trim();
});
afterAll(async () => {
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

/** The idle warm ranks of each node: processes `ebb warm-rank --agent NODE` of that agent still in its pool's cgroup (a claimed one is in its job's). */
function warmRanks(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const lines = commandLines();
  const idle = (pid: number) => {
    try {
      return /^0::\/.*\/warm$/m.test(readFileSync(`/proc/${pid}/cgroup`, "utf8"));
    } catch {
      return false;
    }
  };
  for (const [name, agent] of c.agents) out.set(name, lines.filter((l) => l.ppid === agent.pid && l.cmd.includes(`warm-rank --agent ${name}`) && idle(l.pid)).map((l) => l.pid));
  return out;
}

const allWarm = () => waitFor("a warm rank on every node", async () => [...warmRanks().values()].every((p) => p.length === 1), 60_000);

/** `ebb run ARGS` as the user, from their directory. */
const runAsUser = (args: string[], env: Record<string, string> = {}) => c.ebb(["run", ...args], { cwd: home, env: { EBB_TOKEN: token, ...env } });

const groupsOf = (user: string) => Bun.spawnSync(["id", "-G", user]).stdout.toString().trim().split(/\s+/).map(Number).sort((a, b) => a - b);

test("a claimed warm rank runs as the job's user, in the job's cgroup, with the job's environment and nothing of the agent's", async () => {
  await allWarm();
  const before = new Set([...warmRanks().values()].flat());
  const warm = await runAsUser(["-N", "2", "--", "ebb", "exec", join(base, "probe.ts")], { MARKER: "job's own" });
  expect({ code: warm.code, stderr: warm.stderr }).toEqual({ code: 0, stderr: "" });
  // The same program started cold (argv[0] is not ebb): the environment a warm rank must match.
  const cold = await runAsUser(["-N", "1", "--", "/usr/bin/env", "ebb", "exec", join(base, "probe.ts")], { MARKER: "job's own" });
  expect(cold.code).toBe(0);
  const coldRank = JSON.parse(cold.stdout);
  expect(coldRank.warm).toBe(false);
  const gid = Number(Bun.spawnSync(["id", "-g", USER]).stdout.toString().trim());
  const ranks = warm.stdout.trim().split("\n").map((l) => JSON.parse(l));
  expect(ranks.length).toBe(2);
  for (const r of ranks) {
    expect(r.warm).toBe(true);
    expect(before.has(r.pid)).toBe(true);
    expect({ uid: r.uid, euid: r.euid, gid: r.gid, egid: r.egid, groups: r.groups }).toEqual({ uid, euid: uid, gid, egid: gid, groups: groupsOf(USER) });
    // Every thread: real, effective, saved and filesystem ids; no capability left.
    for (const t of r.threads) expect(t).toEqual({ uid: `${uid}\t${uid}\t${uid}\t${uid}`, gid: `${gid}\t${gid}\t${gid}\t${gid}`, capEff: "0000000000000000", capPrm: "0000000000000000" });
    // The job's cgroup (v2, and v1's where the host has them), as a cold rank's.
    expect(r.cgroup).toMatch(new RegExp(`^0::/.*ebb-agent-node0[12]-\\d+/job-${r.job}$`, "m"));
    expect(r.cgroup.replaceAll(`job-${r.job}`, "JOB").replace(/node0[12]-\d+/g, "AGENT")).toBe(coldRank.cgroup.replaceAll(`job-${coldRank.job}`, "JOB").replace(/node0[12]-\d+/g, "AGENT"));
    // Its agent's cgroup files, its job's and the pool's included, are root's: it cannot raise its limits or move back.
    expect(r.cgroupFiles).toMatch(/^files=\d+$/);
    expect(Number(r.cgroupFiles.slice(6))).toBeGreaterThan(10);
    expect(r.cwd).toBe(home);
    expect(r.env.MARKER).toBe("job's own");
    expect(r.env.USER).toBe(USER);
    expect(r.child).toBe("job's own");
    // Nothing of the agent's own: not in the environment, not in what the kernel holds as the process's start environment.
    expect(JSON.stringify(r.env)).not.toContain(AGENT_SECRET);
    expect(r.kernelEnviron).toEqual([]);
    // The same variables as a cold rank's (less the shell's own, which the cold start runs through).
    const names = (env: Record<string, string>) => Object.keys(env).filter((k) => !["PWD", "OLDPWD", "SHLVL", "_"].includes(k)).sort();
    expect(names(r.env)).toEqual(names(coldRank.env));
    // Dumpable again, as after a cold start's exec: its /proc files are the user's.
    expect(r.environOwner).toBe(uid);
    // The user's process limit, as a cold start's (user-procs.ts): a fork bomb fails its own forks.
    expect(r.maxProcs).toBe(`${USER_PROCS} ${USER_PROCS}`);
    expect(coldRank.maxProcs).toBe(r.maxProcs);
  }
});

test("the pool refills after a claim, with new processes", async () => {
  await allWarm();
  const before = warmRanks();
  const r = await runAsUser(["-N", "2", "--", "ebb", "exec", join(base, "probe.ts")]);
  expect(r.code).toBe(0);
  for (const line of r.stdout.trim().split("\n")) expect(JSON.parse(line).warm).toBe(true);
  await allWarm();
  for (const [node, pids] of warmRanks()) {
    expect(pids.length).toBe(1);
    expect(before.get(node)).not.toContain(pids[0]);
    expect(pidAlive(before.get(node)![0]!)).toBe(false);
  }
});

test("a grow's joining rank is a warm one, and the grown job computes the right answer", async () => {
  await allWarm();
  const run = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "run", "-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", "ebb", "exec", join(base, "grow.ts")], {
    cwd: home,
    env: { ...c.env, EBB_TOKEN: token },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const reader = run.stdout.getReader();
    let text = "";
    await waitFor("rank 0 to be ready", async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`ebb run ended early: ${text} ${await new Response(run.stderr).text()}`);
      text += new TextDecoder().decode(value);
      return text.includes("ready rank=0");
    });
    const job = (await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs[0].id as number;
    await allWarm(); // the first rank took node01's or node02's; the grow's must find the other's there
    const a = await c.resize(job, 2);
    expect({ state: a.state, message: a.message }).toEqual({ state: "COMMITTED", message: null });
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    expect(await run.exited).toBe(0);
    expect(text).toContain("sum=3 ");
  // Rank 1, the grow's, was warm (rank 0 was, too, unless its node's pool was still refilling).
    expect(text).toMatch(/warm=[01],1\n/);
  } finally {
    run.kill();
  }
});

test("what a cold start refuses the user, a warm rank refuses too; the user cannot touch an idle warm rank", async () => {
  await allWarm();
  const [idle] = [...warmRanks().values()].flat();
  // An idle warm rank is root's: the user can neither signal it nor read its memory or environment.
  const asUser = (cmd: string) => Bun.spawnSync(["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--", "/bin/sh", "-c", cmd], { stderr: "pipe" });
  expect(asUser(`kill -0 ${idle}`).exitCode).not.toBe(0);
  expect(asUser(`cat /proc/${idle}/environ`).exitCode).not.toBe(0);
  expect(asUser(`cat /proc/${idle}/mem`).exitCode).not.toBe(0);
  // A program in a root-only directory: the warm rank, now the user, cannot read it.
  let pids = new Set([...warmRanks().values()].flat());
  const hidden = await runAsUser(["-N", "2", "--", "ebb", "exec", join(rootOnly, "prog.ts")]);
  expect(hidden.code).not.toBe(0);
  expect(hidden.stderr).toContain("no such file");
  for (const p of pids) expect(pidAlive(p)).toBe(false); // both were claimed
  // A working directory the user cannot enter.
  await allWarm();
  pids = new Set([...warmRanks().values()].flat());
  const cwd = await c.ebb(["run", "-N", "2", "--chdir", rootOnly, "--", "ebb", "exec", join(base, "probe.ts")], { cwd: home, env: { EBB_TOKEN: token } });
  expect(cwd.code).toBe(126);
  expect(cwd.stdout).toBe("");
  for (const p of pids) expect(pidAlive(p)).toBe(false);
  expect(readdirSync(marks)).toEqual([]);
  expect(readdirSync(rootOnly)).toEqual(["prog.ts"]);
  // The runtime's start-up variables (the loader's above all) are for a cold start only: the warm rank is left idle.
  await allWarm();
  pids = new Set([...warmRanks().values()].flat());
  const preload = await runAsUser(["-N", "1", "--", "ebb", "exec", join(base, "probe.ts")], { LD_PRELOAD: "" });
  expect(preload.code).toBe(0);
  expect(JSON.parse(preload.stdout).warm).toBe(false);
  for (const p of pids) expect(pidAlive(p)).toBe(true);
  expect(existsSync(marks)).toBe(true);
});

test("an idle warm rank ends with its agent, even an agent killed with SIGKILL", async () => {
  await allWarm();
  const idle = warmRanks().get("node02")!;
  expect(idle.length).toBe(1);
  c.agents.get("node02")!.kill("SIGKILL");
  await waitFor("node02's warm rank to end", async () => !pidAlive(idle[0]!), 30_000);
});

// Last: its node would take other tests' jobs.
test("an agent that is not root keeps warm ranks as its own user, and a rank it hands one runs as that user", async () => {
  const gid = Number(Bun.spawnSync(["id", "-g", USER]).stdout.toString().trim());
  const agentHome = join(base, "plain-agent");
  mkdirSync(agentHome, { mode: 0o700 });
  chownSync(agentHome, uid, gid);
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  // setpriv execs the agent: the pid is the agent's.
  const agent = Bun.spawn(
    ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--init-groups", "--", process.execPath, join(ROOT, "src/main.ts"), "agent", "--controller", c.url, "--name", "plain", "--cpus", "1", "--state-dir", join(agentHome, "state")],
    { cwd: agentHome, env: { ...c.env, HOME: agentHome, EBB_CLUSTER_KEY: key, EBB_LOG: "warn" }, stdout: "ignore", stderr: "pipe" },
  );
  try {
    await waitFor("node plain to be IDLE", async () => (await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === "plain")?.state === "IDLE", 90_000);
    const idle = await waitFor("plain's warm rank", async () => commandLines().find((l) => l.ppid === agent.pid && l.cmd.includes("warm-rank --agent plain"))?.pid, 60_000);
    expect(Bun.spawnSync(["stat", "-c", "%u", `/proc/${idle}`]).stdout.toString().trim()).toBe(String(uid));
    // The cluster's token (root's): the job runs as the agent's user, as a cold rank there would.
    const r = await c.ebb(["run", "-w", "plain", "--", "ebb", "exec", join(base, "probe.ts")], { cwd: base, env: { MARKER: "plain's" } });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const rank = JSON.parse(r.stdout);
    expect({ warm: rank.warm, pid: rank.pid, uid: rank.uid, gid: rank.gid, marker: rank.env.MARKER, child: rank.child, cwd: rank.cwd }).toEqual({ warm: true, pid: idle, uid, gid, marker: "plain's", child: "plain's", cwd: base });
    expect(JSON.stringify(rank.env)).not.toContain(key);
  } finally {
    agent.kill("SIGTERM");
    await agent.exited;
  }
}, 180_000);
