/**
 * Two real users on one node, the agent root: what user B (ebbt_bob) can do to user A (ebbt_alice)
 * and to the node with nothing but a token of his own and a shell there. Each test is one attack:
 * a FIFO at his own job's output path (the agent's thread waited in open(2), the node went DOWN),
 * Alice's step's PMI_PORT (bind as her rank 0 and abort), her ebb/comm ranks' TCP listener (one
 * DEAD frame failed her allreduce), her umask 077 (her files were made 644), JSON nested a million
 * deep (his CFG file took the node DOWN; his body, launcher message and a peer's frame held a
 * daemon's thread), a launcher socket that never reads its answers (~15 MB each held); and, holding as they
 * are, her GPU (the device fence: from his shell, a move into her cgroup, a warm rank), her job on
 * the launcher socket (attach with known, fault, release), her files through srun's per-task
 * -o/-e/-i; and from his own launcher on the step port: a 13 MiB PATH (the agent's thread searched
 * it), 1,025 ranks on one node, fence.out pieces without end. What is covered elsewhere (loader variables, symlinks at output paths, cgroup files,
 * credentials, the API under fuzzing) is in root-attacks, users, credentials and fuzz-api.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, startCluster, type TestCluster, waitFor } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";
import { VERSION } from "../../src/util/version.ts";
import { framesOf } from "../../src/proto/frames.ts";
import { argvDigest, envDigest, signCredential } from "../../src/proto/credential.ts";
import { MAX_RANKS_PER_NODE } from "../../src/domain/ranks-per-node.ts";
import { MAX_VARIABLE_BYTES } from "../../src/proto/requests.ts";
import { MAX_CONNECTIONS_PER_JOB, MAX_UNAUTHENTICATED_PER_PEER, STEP_MESSAGE_COST } from "../../src/roles/agent/server.ts";
import { KVS_KEY_COST, KVS_MAX_BYTES, USER_KVS_MAX_BYTES } from "../../src/pmi/limits.ts";
import { BODIES_PER_USER } from "../../src/api/app.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
const ENDED = ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT"];
let c: TestCluster;
let base: string;
const tokens: Record<string, string> = {};
const uid: Record<string, number> = {};

beforeAll(async () => {
  expect(process.getuid!()).toBe(0);
  for (const u of USERS) uid[u] = ensureUser(u);
  base = mkdtempSync(join(tmpdir(), "ebb-user-attacks-"));
  chmodSync(base, 0o755);
  for (const u of USERS) {
    mkdirSync(join(base, u), { mode: 0o700 });
    chownSync(join(base, u), uid[u]!, uid[u]!);
  }
  c = await startCluster({ agents: 0, cpus: 4, heartbeat: 1 });
  // Two GPUs' device files, any user's to open: character devices of a major no driver holds, so an
  // open the fence lets through fails with ENXIO and one it refuses with EPERM (node-confinement).
  const used = new Set([...readFileSync("/proc/devices", "utf8").split("Block devices:")[0]!.matchAll(/^\s*(\d+) /gm)].map((m) => Number(m[1])));
  const major = [240, 241, 242, 243, 244].find((m) => !used.has(m))!;
  for (const i of [0, 1]) {
    expect(Bun.spawnSync(["mknod", "-m", "666", join(base, `gpu${i}`), "c", String(major), String(i)]).exitCode).toBe(0);
  }
  c.startAgent("node01", ["--gres", "gpu:2", "--gpu-devices", `${join(base, "gpu0")},${join(base, "gpu1")}`]);
  await c.waitNodes(1, "IDLE", 90_000);
  for (const u of USERS) tokens[u] = (await c.api("POST", "/v1/tokens", { user: u })).json.token;
});
afterAll(async () => {
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

const dir = (user: string) => join(base, user);
const submitAs = (user: string, body: Record<string, unknown>) => c.submit({ cwd: dir(user), ...body }, tokens[user]!);
/** Run a shell command as `user`, as their own shell on the node would. */
const asUserSh = (user: string, cmd: string) => Bun.spawnSync(["setpriv", `--reuid=${uid[user]}`, `--regid=${uid[user]}`, "--clear-groups", "--", "/bin/sh", "-c", cmd], { cwd: dir(user), stdout: "pipe", stderr: "pipe" });

test("a FIFO at a job's output or error path fails that job, naming it; the agent does not wait on it, the node stays UP and the other user's job runs on", async () => {
  // Unfixed: the agent's thread waited in open(2) for a reader, its heartbeats stopped, the node went DOWN and Alice's job NODE_FAIL.
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "120"], output: "alice.out" });
  await c.waitJob(alices, ["RUNNING"]);
  expect(asUserSh("ebbt_bob", "mkfifo fifo fifo-read").exitCode).toBe(0);
  const fifo = join(dir("ebbt_bob"), "fifo");
  // A reader waits on fifo-read: its open for writing succeeds, and the FIFO is refused after it.
  const reader = Bun.spawn(["setsid", "setpriv", `--reuid=${uid.ebbt_bob}`, `--regid=${uid.ebbt_bob}`, "--clear-groups", "--", "/bin/sh", "-c", "while :; do cat fifo-read; done"], { cwd: dir("ebbt_bob"), stdio: ["ignore", "ignore", "ignore"] });
  try {
    // A process of his opens the files after the drop (output-after-drop.ts), and refuses a FIFO before it opens it.
    const noReader = `output file ${fifo} is a FIFO:`;
    const withReader = `output file ${fifo}-read is a FIFO:`;
    const attacks = [
      [{ script: "#!/bin/sh\necho x\n", output: fifo }, noReader],
      [{ script: "#!/bin/sh\necho x\n", output: "ok-%j.out", error: fifo }, noReader],
      [{ argv: ["echo", "x"], output: fifo }, noReader],
      [{ argv: ["echo", "x"], output: "ok-%j.out", error: fifo }, noReader],
      [{ script: "#!/bin/sh\necho x\n", output: `${fifo}-read` }, withReader],
      [{ argv: ["echo", "x"], output: `${fifo}-read` }, withReader],
    ] as const;
    for (const [body, reason] of attacks) {
      const end = await c.waitJob(await submitAs("ebbt_bob", body), ENDED, 30_000);
      expect({ body, state: end.state, reason: end.reason }).toEqual({ body, state: "FAILED", reason: expect.stringContaining(reason) });
    }
    // /dev/null is still an output.
    const devnull = await submitAs("ebbt_bob", { script: "#!/bin/sh\necho x\n", output: "/dev/null", error: "/dev/null" });
    expect((await c.waitJob(devnull, ENDED, 30_000)).state).toBe("COMPLETED");
    const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
    expect({ node: node.state, alice: (await c.job(alices)).state }).toEqual({ node: expect.stringMatching(/^(IDLE|MIXED|ALLOCATED)$/), alice: "RUNNING" });
  } finally {
    process.kill(-reader.pid, "SIGKILL");
    await c.api("DELETE", `/v1/jobs/${alices}`);
  }
}, 120_000);

test("another user cannot take a rank's place on a step's PMI_PORT: refused unanswered; the rank, connecting after, is served and the step completes", async () => {
  // Unfixed: Bob's connection bound itself as rank 0 (any user may connect to a port on loopback), and his abort killed Alice's step.
  const port = join(dir("ebbt_alice"), "pmi-port");
  const go = join(dir("ebbt_alice"), "pmi-go");
  const rank = `echo "$PMI_PORT" > ${port}; while [ ! -f ${go} ]; do sleep 0.1; done
exec 3<>/dev/tcp/\${PMI_PORT%:*}/\${PMI_PORT#*:}
printf "cmd=initack pmiid=$PMI_ID\\ncmd=init pmi_version=1 pmi_subversion=1\\ncmd=finalize\\n" >&3
head -6 <&3`;
  await Bun.write(join(dir("ebbt_alice"), "pmi-rank.sh"), rank);
  const script = "#!/bin/sh\nebb run --pmi-port -n 1 bash pmi-rank.sh\necho step=$?\n";
  const alices = await submitAs("ebbt_alice", { script, output: "pmi-port.out" });
  const [host, p] = (await waitForFile(port)).trim().split(":");
  // Bob would find the port by trying the node's loopback listeners; he binds as rank 0 and aborts.
  const attack = asUserSh("ebbt_bob", `exec bash -c 'exec 3<>/dev/tcp/${host}/${p} || exit 9; printf "cmd=initack pmiid=0\\ncmd=init pmi_version=1 pmi_subversion=1\\ncmd=abort exitcode=7\\n" >&3; timeout 5 cat <&3'`);
  expect({ connected: attack.exitCode !== 9, answer: attack.stdout.toString() }).toEqual({ connected: true, answer: "" });
  asUserSh("ebbt_alice", `touch ${go}`);
  const end = await c.waitJob(alices, ENDED, 60_000);
  const out = readFileSync(join(dir("ebbt_alice"), "pmi-port.out"), "utf8");
  expect({ state: end.state, out }).toEqual({ state: "COMPLETED", out: expect.stringContaining("cmd=set rank=0\n") });
  expect(out).toEndWith("cmd=finalize_ack\nstep=0\n");
}, 120_000);

test("a step's PMI_PORT takes one connection per rank and 16 more at once: a rank that opens 300 holds 17 of the agent's descriptors, not 300", async () => {
  // Unfixed: every connection of the ranks' user was taken and held, each a descriptor of the
  // (root) agent that serves every user: his ranks could take all 20,000.
  const go = join(dir("ebbt_bob"), "pmi-flood-go");
  const flood = `use IO::Socket::INET; my ($h, $p) = split /:/, $ENV{PMI_PORT}; my @s;
for (1..300) { my $s = IO::Socket::INET->new(PeerAddr => $h, PeerPort => $p) or last; push @s, $s }
print "opened ", scalar(@s), "\n"; select(undef, undef, undef, 0.1) until -e "${go}";`;
  await Bun.write(join(dir("ebbt_bob"), "pmi-flood.pl"), flood);
  const bobs = await submitAs("ebbt_bob", { script: "#!/bin/sh\nebb run --pmi-port -n 1 perl pmi-flood.pl\necho step=$?\n", output: "pmi-flood.out" });
  await waitFor("the agent to refuse past the cap", () => c.daemonLogs().includes("PMI_PORT: refused connections past 17 open at once"));
  asUserSh("ebbt_bob", `touch ${go}`);
  // Not NODE_FAIL: the agent once looked up the owner of every connection past the cap too,
  // reading the kernel's socket table each time, and stalled until the node was declared down.
  const ended = await c.waitJob(bobs, ENDED, 60_000);
  expect(`${ended.state} ${ended.reason ?? ""}`.trim()).toBe("COMPLETED");
  expect(readFileSync(join(dir("ebbt_bob"), "pmi-flood.out"), "utf8")).toBe("opened 300\nstep=0\n");
}, 120_000);

test("his steps on a node together hold at most USER_KVS_MAX_BYTES of PMI keys and values, however many he runs: the put past it names the per-user cap; her step on the node fills its own", async () => {
  // Unfixed: each of his 4 steps held KVS_MAX_BYTES (16 MiB) at once, 64 MiB and 4 MiB of keys of the root agent's memory, and more with more steps.
  const filler = join(import.meta.dir, "../pmi/fixtures/kvs-filler.ts");
  const go = join(dir("ebbt_bob"), "kvs-go");
  const step = (name: string) => `KVS_FILLER_HOLD=${go} KVS_FILLER_BATCH=32 ebb run -n 1 ${process.execPath} ${filler} v1 ${name} none 900 > ${name}.out 2> ${name}.err &`;
  const bobs = await submitAs("ebbt_bob", { script: `#!/bin/sh\n${[1, 2, 3, 4].map((i) => step(`kvs${i}`)).join("\n")}\nwait\n`, output: "kvs.out" });
  const outs = await waitFor("his 4 steps to fill their KVS", () => {
    const texts = [1, 2, 3, 4].map((i) => (existsSync(join(dir("ebbt_bob"), `kvs${i}.out`)) ? readFileSync(join(dir("ebbt_bob"), `kvs${i}.out`), "utf8") : ""));
    return texts.every((t) => t.endsWith("\n")) && texts.map((t) => JSON.parse(t));
  }, 120_000).catch((e) => {
    console.log(["kvs.out", ...[1, 2, 3, 4].flatMap((i) => [`kvs${i}.out`, `kvs${i}.err`])].map((f) => `--- ${f}\n${existsSync(join(dir("ebbt_bob"), f)) ? readFileSync(join(dir("ebbt_bob"), f), "utf8").slice(0, 600) : "(none)"}`).join("\n"), c.daemonLogs().slice(-3000));
    throw e;
  });
  const perUser = "per-user_cap_USER_KVS_MAX_BYTES";
  // Each accepted put costs at least its 900 bytes of value and KVS_KEY_COST.
  const held = outs.reduce((n, o) => n + o.accepted * (900 + KVS_KEY_COST), 0);
  expect(held).toBeLessThanOrEqual(USER_KVS_MAX_BYTES);
  expect(outs.filter((o) => o.refused.msg.includes(perUser)).length).toBeGreaterThanOrEqual(1);
  // While his steps hold his share, hers fills to the per-step cap, not refused for his.
  const alices = await submitAs("ebbt_alice", { script: `#!/bin/sh\nKVS_FILLER_BATCH=32 ebb run -n 1 ${process.execPath} ${filler} v1 kvsA none 900 > kvsA.out 2> kvsA.err\n`, output: "kvsA-job.out" });
  expect((await c.waitJob(alices, ENDED, 120_000)).state).toBe("COMPLETED");
  const hers = JSON.parse(readFileSync(join(dir("ebbt_alice"), "kvsA.out"), "utf8"));
  expect({ refused: hers.refused.msg, fence: hers.fence }).toEqual({ refused: expect.stringContaining("per-step_cap_KVS_MAX_BYTES"), fence: 0 });
  asUserSh("ebbt_bob", `touch ${go}`);
  expect((await c.waitJob(bobs, ENDED, 60_000)).state).toBe("COMPLETED");
}, 300_000);

test("a signal to his job does not reach the process group that took the id of his ended rank: the root agent signals a group only while its leader is his, else its members in his cgroup", async () => {
  // Unfixed: the agent kept every group of the job and sent kill(-pgid) as root, the leader gone or
  // not: with pid_max 32,768 Bob can cycle pids until his ended rank's id is someone's new group
  // (hers here; root's as well) and signal it with scancel --signal.
  const d = dir("ebbt_bob");
  const script = `#!/bin/sh
ebb run -n 1 sh -c 'echo $$ > rank.pid'
ebb run -n 1 sh -c 'trap "echo got > term.out; exit 0" TERM; echo > trap.ready; while :; do sleep 0.1; done' &
ebb run -n 1 sh -c '(trap "echo got > orphan.out; exit 0" TERM; echo > orphan.ready; while :; do sleep 0.1; done) >/dev/null 2>&1 & exit 0' &
sleep 300
`;
  const bobs = await submitAs("ebbt_bob", { script, output: "/dev/null" });
  await waitForFile(join(d, "trap.ready"));
  await waitForFile(join(d, "orphan.ready"));
  const pid = Number((await waitForFile(join(d, "rank.pid"))).trim());
  // Her process gets that pid and leads a group of its own: the kernel gives the pid after ns_last_pid.
  let hers: ReturnType<typeof Bun.spawn> | undefined;
  for (let i = 0; i < 200 && !hers; i++) {
    writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
    const p = Bun.spawn(["setpriv", `--reuid=${uid.ebbt_alice}`, `--regid=${uid.ebbt_alice}`, "--clear-groups", "--", "sleep", "300"], { detached: true });
    if (p.pid === pid) hers = p;
    else p.kill("SIGKILL");
  }
  expect(hers?.pid).toBe(pid);
  expect((await c.api("POST", `/v1/jobs/${bobs}/signal`, { signal: "SIGTERM" }, tokens.ebbt_bob)).status).toBe(200);
  // His live rank got it: the agent has sent the signal to every group of the job.
  expect((await waitForFile(join(d, "term.out"))).trim()).toBe("got");
  // And a rank's child left in its group after the rank ended, found in his cgroup.
  expect((await waitForFile(join(d, "orphan.out"))).trim()).toBe("got");
  hers!.kill("SIGKILL");
  await hers!.exited;
  expect(hers!.signalCode).toBe("SIGKILL");
  await c.api("DELETE", `/v1/jobs/${bobs}`);
}, 120_000);

test("a user whose umask is 077 gets files no other user can read: batch output, files of the script, a step's and an ebb run's ranks", async () => {
  // Unfixed: every one was made with the agent's umask (022), readable by Bob in any directory he can enter.
  const cli = `EBB_TOKEN=${tokens.ebbt_alice} EBB_CONTROLLER=${c.url} ${process.execPath} ${join(ROOT, "src/main.ts")}`;
  const submit = asUserSh("ebbt_alice", `umask 077; ${cli} submit --parsable -o umask-%j.out --wrap 'touch made-batch; ebb run -n 1 touch made-step; umask; echo \${SLURM_UMASK-gone}'`);
  expect(submit.stderr.toString()).toBe("");
  const id = Number(submit.stdout.toString().trim());
  const run = asUserSh("ebbt_alice", `umask 077; ${cli} run -n 1 -o run-%j.out touch made-run`);
  expect({ code: run.exitCode, err: run.stderr.toString() }).toEqual({ code: 0, err: "" });
  expect((await c.waitJob(id, ENDED, 60_000)).state).toBe("COMPLETED");
  const modes = Object.fromEntries(readdirSync(dir("ebbt_alice")).filter((f) => /^(umask-|made-|run-)/.test(f)).map((f) => [f.replace(/\d+/, "N"), (statSync(join(dir("ebbt_alice"), f)).mode & 0o777).toString(8)]));
  expect(modes).toEqual({ "umask-N.out": "600", "made-batch": "600", "made-step": "600", "run-N.out": "600", "made-run": "600" });
  expect(readFileSync(join(dir("ebbt_alice"), `umask-${id}.out`), "utf8")).toBe("0077\ngone\n");
}, 120_000);

test("another user's process cannot talk to a job's ebb/comm ranks over their TCP port: a DEAD naming a peer, a forged HELLO, a HELLO claiming 1 GiB, 300 connections that say nothing (64 held at most, 10 s each); the ranks run on", async () => {
  // Unfixed: the listener (0.0.0.0) took Bob's DEAD frame for the truth, and Alice's allreduce failed naming Bob's reason.
  const me = dir("ebbt_alice");
  const victim = `import { existsSync, writeFileSync } from "node:fs";
import { currentTransport, finalizeAdapt, initAdapt } from "${ROOT}/src/comm/index.ts";
const { world } = await initAdapt();
await world.barrier();
writeFileSync("${me}/card." + world.rank, currentTransport()!.cardText + "\\n");
while (!existsSync("${me}/comm-go")) await Bun.sleep(50);
console.log("rank=" + world.rank + " sum=" + (await world.allreduce(world.rank + 1, "sum")));
await finalizeAdapt();
`;
  await Bun.write(join(me, "comm-victim.ts"), victim);
  const attacker = join(base, "comm-attack.ts");
  await Bun.write(attacker, `import { connect } from "node:net";
import { controlFrame, FrameType, writeHeader } from "${ROOT}/src/comm/codec.ts";
const [host, port, peer] = process.argv.slice(2);
const send = async (frames: Uint8Array[]) => {
  let closed = false;
  const s = await Bun.connect({ hostname: host!, port: Number(port), socket: { data() {}, close() { closed = true; } } });
  for (const f of frames) s.write(f);
  await Bun.sleep(500);
  if (!closed) s.end();
  return closed;
};
const dead = await send([controlFrame(FrameType.DEAD, { id: peer, reason: "bob says so" })]);
const hello = await send([controlFrame(FrameType.HELLO, { id: peer, node: "node01" }), controlFrame(FrameType.DEAD, { id: peer, reason: "bob says so" })]);
const claim = new Uint8Array(24);
writeHeader(claim, { type: FrameType.HELLO, flags: 0, ctx: 0, src: 0, tag: 0, seq: 0 }, 1 << 30, 0);
// The claim, then its bytes as fast as the rank takes them, for 2 s.
const huge = await new Promise<boolean>((resolve) => {
  const s = connect({ host: host!, port: Number(port) }, () => {
    s.write(claim);
    const pump = () => { while (s.write(new Uint8Array(1 << 20))); };
    s.on("drain", pump);
    pump();
  });
  s.on("error", () => {});
  s.on("close", () => resolve(true));
  setTimeout(() => (s.destroy(), resolve(false)), 2000);
});
// 300 connections that say nothing, held: each was one of the rank's descriptors, for good. The
// rank keeps the newest 64 (for 10 s, not waited for here) and closes the others at once.
let shut = 0;
const idle = await new Promise<boolean>((resolve) => {
  for (let i = 0; i < 300; i++) {
    const s = connect({ host: host!, port: Number(port) });
    s.on("error", () => {});
    s.on("close", () => ++shut === 300 - 64 && resolve(true));
  }
  setTimeout(() => resolve(false), 30_000);
});
console.log(JSON.stringify({ dead, hello, huge, idle }));
process.exit(0);
`);
  const script = `#!/bin/sh\nebb run -n 2 ${process.execPath} comm-victim.ts\necho step=$?\n`;
  const alices = await submitAs("ebbt_alice", { script, output: "comm.out", tasks: 2 });
  const [rank0, rank1] = [JSON.parse(await waitForFile(join(me, "card.0"))), JSON.parse(await waitForFile(join(me, "card.1")))];
  const [host, port] = [rank0.tcp.slice(0, rank0.tcp.lastIndexOf(":")), rank0.tcp.slice(rank0.tcp.lastIndexOf(":") + 1)];
  const attack = asUserSh("ebbt_bob", `${process.execPath} ${attacker} ${host} ${port} ${rank1.id}`);
  // Each of Bob's connections was closed by the rank, not by Bob; unfixed, a header claiming a
  // 1 GiB HELLO had the rank allocate it and take its bytes (measured: 400 MB sent, held).
  expect({ out: attack.stdout.toString(), err: attack.stderr.toString() }).toEqual({ out: '{"dead":true,"hello":true,"huge":true,"idle":true}\n', err: "" });
  asUserSh("ebbt_alice", `touch ${join(me, "comm-go")}`);
  expect((await c.waitJob(alices, ENDED, 60_000)).state).toBe("COMPLETED");
  const out = readFileSync(join(me, "comm.out"), "utf8");
  expect(out.split("\n").filter(Boolean).sort()).toEqual(["rank=0 sum=3", "rank=1 sum=3", "step=0"]);
}, 120_000);

test("another user's job cannot open the GPU a job holds: not from its shell, nor from a warm rank, and it cannot move into her cgroup or out of its own", async () => {
  // Without the fence (device-fence.ts) every open of gpu0 below succeeds to ENXIO.
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "120"], gpus: 1, output: "/dev/null" });
  await c.waitJob(alices, ["RUNNING"]);
  const probe = join(base, "gpu-probe.ts");
  await Bun.write(probe, `import { openSync, readFileSync } from "node:fs";
const warm = readFileSync("/proc/self/cmdline", "utf8").includes("warm-rank");
const open = (i: number) => { try { openSync("${base}/gpu" + i, "r"); return "opened"; } catch (e) { return (e as NodeJS.ErrnoException).code; } };
console.log(\`warm=\${warm} gpu0=\${open(0)} gpu1=\${open(1)}\`);
`);
  const script = `#!/bin/sh
root=$(awk '$3=="cgroup2" {print $2; exit}' /proc/mounts)
cg=$root$(sed -n 's/^0:://p' /proc/self/cgroup)
echo "gpus=$EBB_GPUS cuda=$CUDA_VISIBLE_DEVICES cgroup=\${cg##*/}"
for i in 0 1; do cat ${base}/gpu$i 2>&1 | sed "s/.*: //"; done
escape() { for to in "$@"; do (echo $$ >"$to/cgroup.procs") 2>&1 | sed "s/.*: //"; done; }
escape "$cg/../job-${alices}" "$cg/.." "$root"
ebb run -n 1 ebb exec ${probe}
escape "$cg/../warm"
`;
  // The agent's warm rank, waiting to be claimed by Bob's ebb exec.
  const root = readFileSync("/proc/mounts", "utf8").match(/^\S+ (\S+) cgroup2 /m)![1]!;
  const pool = join(root, `ebb-agent-node01-${c.agents.get("node01")!.pid}`, "warm", "cgroup.procs");
  for (let i = 0; i < 300 && !(existsSync(pool) && readFileSync(pool, "utf8").trim()); i++) await Bun.sleep(100);
  const bobs = await submitAs("ebbt_bob", { script, gpus: 1, output: "gpu.out" });
  expect((await c.waitJob(bobs, ENDED, 60_000)).state).toBe("COMPLETED");
  await c.api("DELETE", `/v1/jobs/${alices}`);
  expect(readFileSync(join(dir("ebbt_bob"), "gpu.out"), "utf8").split("\n")).toEqual([
    `gpus=1 cuda=0 cgroup=job-${bobs}`,
    "Operation not permitted",
    "No such device or address",
    "Permission denied",
    "Permission denied",
    "Permission denied",
    "warm=true gpu0=EPERM gpu1=ENXIO",
    "Permission denied",
    "",
  ]);
}, 90_000);

test("another user's token, or his job's, cannot speak for her job on the launcher socket: attach (with known), fault, adapt.done, step.end and release are refused; her job runs on", async () => {
  // Ungated, the fault alone ends her job NODE_FAIL.
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "120"], output: "/dev/null" });
  const bobs = await submitAs("ebbt_bob", { script: "#!/bin/sh\necho $EBB_TOKEN >token\nsleep 120\n", output: "/dev/null" });
  await c.waitJob(alices, ["RUNNING"]);
  const jobToken = (await waitForFile(join(dir("ebbt_bob"), "token"))).trim();
  const says = [
    { t: "attach", jobId: alices, stepId: 0, elastic: true, known: 0 },
    { t: "fault", jobId: alices, node: "node01", reason: "bob says so" },
    { t: "adapt.done", jobId: alices, adaptId: 1, ok: false, times: {} },
    { t: "step.end", jobId: alices, stepId: 0, exitCode: 1 },
    { t: "release", jobId: alices, exitCode: 1 },
  ];
  for (const token of [tokens.ebbt_bob!, jobToken]) {
    const got: Record<string, unknown>[] = [];
    const ws = new WebSocket(`${c.url.replace("http", "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
    ws.onmessage = (ev) => got.push(JSON.parse(String(ev.data)));
    await new Promise((resolve) => (ws.onopen = resolve));
    for (const m of [{ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION }, ...says]) ws.send(JSON.stringify(m));
    for (let i = 0; i < 100 && got.length < says.length; i++) await Bun.sleep(50);
    ws.close();
    expect(got.map((m) => [m.t, m.code])).toEqual(says.map(() => ["error", "forbidden"]));
  }
  expect((await c.job(alices)).state).toBe("RUNNING");
  for (const id of [alices, bobs]) await c.api("DELETE", `/v1/jobs/${id}`);
}, 60_000);

test("srun's per-task files (-o/-e %t, -i) are opened as the step's user: his own files are his, hers he can neither read as input nor write as output", async () => {
  // Alice's file, beside both users' directories: only she may read or write it.
  const hers = join(base, "alice-secret");
  await Bun.write(hers, "alice's secret\n");
  chownSync(hers, uid.ebbt_alice!, uid.ebbt_alice!);
  chmodSync(hers, 0o600);
  const script = `#!/bin/sh
srun -n 2 -o mine-%t.out -e mine-%t.err sh -c 'id -un; id -un >&2'
denied() { "$@" 2>&1 | grep -oi "permission denied" | tr A-Z a-z; }
denied srun -n 1 -i ${hers} cat
denied srun -n 1 -o ${hers} echo bob was here
denied srun -n 2 -o ${base}/bob-%t.out true
ls -n mine-0.out mine-1.out mine-0.err mine-1.err | awk '{print $3, $NF}'
cat mine-0.out mine-1.err
`;
  const bobs = await submitAs("ebbt_bob", { script, tasks: 2, output: "srun-files.out" });
  await c.waitJob(bobs, ENDED, 60_000);
  expect(readFileSync(hers, "utf8")).toBe("alice's secret\n");
  const b = uid.ebbt_bob;
  expect(readFileSync(join(dir("ebbt_bob"), "srun-files.out"), "utf8").split("\n")).toEqual([
    "permission denied",
    "permission denied",
    "permission denied",
    `${b} mine-0.err`,
    `${b} mine-0.out`,
    `${b} mine-1.err`,
    `${b} mine-1.out`,
    "ebbt_bob",
    "ebbt_bob",
    "",
  ]);
}, 60_000);

test("JSON nested past 512 levels is refused unparsed: his rank's CFG file, his request body, his launcher's message, a peer's first frame on the step port; the node stays UP and her job runs on", async () => {
  // Unfixed: Bun's JSON.parse takes seconds on MBs of "[[[[": the CFG file held the agent's thread
  // when his rank ended, the node went DOWN and his step (and any job on the node) NODE_FAIL; the
  // others held the controller's or the agent's thread as long, and were "not JSON" after it.
  const alices = await submitAs("ebbt_alice", { argv: ["sleep", "120"], output: "/dev/null" });
  await c.waitJob(alices, ["RUNNING"]);
  const deep = "[".repeat(1 << 20);
  const tooDeep = "JSON nested deeper than 512 levels of arrays and objects";
  const post = await c.api("POST", "/v1/jobs", deep, tokens.ebbt_bob);
  expect([post.status, post.json.error.message]).toEqual([400, `the body is ${tooDeep}`]);
  const launcher = new WebSocket(`${c.url.replace("http", "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${tokens.ebbt_bob}` } } as unknown as string[]);
  const said = new Promise<string>((resolve) => (launcher.onmessage = (ev) => resolve(String(ev.data))));
  await new Promise((resolve) => (launcher.onopen = resolve));
  // In pieces, as a launcher sends a message over 64 KiB (the next tests).
  for (const frame of framesOf(deep)) launcher.send(frame);
  expect(JSON.parse(await said)).toEqual({ t: "error", code: "invalid_request", message: `invalid message: message is ${tooDeep}` });
  launcher.close();
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const peer = new WebSocket(`ws://${node.addr}/v1/step`);
  const closed = new Promise<string>((resolve) => (peer.onclose = (ev) => resolve(ev.reason)));
  await new Promise((resolve) => (peer.onopen = resolve));
  // Under the 64 KiB a frame may be before a credential (the next test).
  peer.send(deep.slice(0, 60_000));
  expect(await closed).toBe(`invalid message: message is ${tooDeep}`);
  const cli = `EBB_TOKEN=${tokens.ebbt_bob} EBB_CONTROLLER=${c.url} ${process.execPath} ${join(ROOT, "src/main.ts")}`;
  const run = asUserSh("ebbt_bob", `${cli} run -n 1 sh -c 'head -c 8388608 /dev/zero | tr "\\0" "[" >"$EBB_CFG_FILE"'`);
  expect({ code: run.exitCode, err: run.stderr.toString() }).toEqual({ code: 0, err: "" });
  expect(c.daemonLogs()).toMatch(new RegExp(`cfg: rank-0\\.json of step \\d+\\.0: ${tooDeep}; not read`));
  expect({ node: (await c.api("GET", "/v1/nodes")).json.nodes[0].state, alice: (await c.job(alices)).state }).toEqual({ node: expect.stringMatching(/^(IDLE|MIXED|ALLOCATED)$/), alice: "RUNNING" });
  await c.api("DELETE", `/v1/jobs/${alices}`);
}, 120_000);

test("the step port takes no frame over 64 KiB, nor a message in pieces, before a credential: 1 MiB from a peer is closed unread; a step whose launch is ~260 KB runs", async () => {
  // Unfixed: an agent took frames of up to 64 MiB from anyone, held whole before the first message
  // could be judged (16 connections per address, and a node has all of 127.0.0.0/8).
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const closeOf = async (frame: string | Uint8Array<ArrayBuffer>) => {
    const peer = new WebSocket(`ws://${node.addr}/v1/step`);
    const closed = new Promise<[number, string]>((resolve) => (peer.onclose = (ev) => resolve([ev.code, ev.reason])));
    await new Promise((resolve) => (peer.onopen = resolve));
    peer.send(frame);
    return closed;
  };
  expect((await closeOf("x".repeat(1 << 20)))[0]).toBe(1009);
  expect(await closeOf(new Uint8Array(1000))).toEqual([4413, "a message over 65536 bytes before a step credential"]);
  expect(c.daemonLogs()).toContain("a frame over 65536 bytes (FRAME_MAX)");
  // Two variables of 130,000 bytes (one may be at most 128 KiB): the launch goes after its credential, in pieces.
  const cli = `EBB_TOKEN=${tokens.ebbt_bob} EBB_CONTROLLER=${c.url} ${process.execPath} ${join(ROOT, "src/main.ts")}`;
  const run = asUserSh("ebbt_bob", `export BIG1=$(head -c 130000 /dev/zero | tr "\\0" x) BIG2=$(head -c 130000 /dev/zero | tr "\\0" y); ${cli} run -n 1 sh -c 'echo \${#BIG1} \${#BIG2}'`);
  expect({ code: run.exitCode, out: run.stdout.toString(), err: run.stderr.toString() }).toEqual({ code: 0, out: "130000 130000\n", err: "" });
}, 60_000);

test("the step port holds at most 256 unauthenticated connections from all addresses together: 16 from each of 17 loopback addresses, the oldest past 256 are closed naming it", async () => {
  // Unfixed: 16 per address only, and a node has all of 127.0.0.0/8 (each could send 64 KiB now, 64 MiB before).
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const [host, port] = [node.addr.slice(0, node.addr.lastIndexOf(":")), Number(node.addr.slice(node.addr.lastIndexOf(":") + 1))];
  const said = await Promise.all(
    Array.from({ length: 17 * 16 }, (_, i) =>
      new Promise<string>((resolve) => {
        let got = "";
        const s = connect({ host, port, localAddress: `127.0.0.${2 + Math.floor(i / 16)}` }, () =>
          s.write(`GET /v1/step HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${btoa("0123456789abcdef")}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
        );
        s.on("data", (d) => (got += d.toString("latin1")));
        s.on("error", () => {});
        s.on("close", () => resolve(got));
      }),
    ),
  );
  expect(said.filter((t) => t.includes("more than 256 unauthenticated step connections")).length).toBe(17 * 16 - 256);
}, 60_000);

test("the step port takes a credential only while it is valid, and 256 connections per job: his expired one is refused, a fresh one opens 256 and no more", async () => {
  // Unfixed: any credential the cluster key ever signed authenticated a connection, so one of his
  // old ones opened as many as he liked (each one of the agent's descriptors, and 64 MiB of pieces).
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const bobs = await submitAs("ebbt_bob", { argv: ["sleep", "120"], output: "/dev/null" });
  await c.waitJob(bobs, ["RUNNING"]);
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const auth = (expires: number) => JSON.stringify({ t: "auth", cred: signCredential(key, { jobId: bobs, stepId: 0, nodes: [node.name], expires, use: "adopt" }) });
  const openWith = async (text: string) => {
    const ws = new WebSocket(`ws://${node.addr}/v1/step`);
    const closed = new Promise<[number, string]>((resolve) => (ws.onclose = (ev) => resolve([ev.code, ev.reason])));
    await new Promise((resolve) => (ws.onopen = resolve));
    ws.send(text);
    return { ws, closed };
  };
  expect(await (await openWith(auth(Date.now() - 1))).closed).toEqual([4401, "step credential expired"]);
  const fresh = auth(Date.now() + 60_000);
  // His 257 connections with one fresh credential: exactly one is refused, naming the job's cap,
  // whichever the agent authenticates last. Opened faster than a loaded agent reads their
  // credentials, more than MAX_UNAUTHENTICATED_PER_PEER of them can wait unread at once from this
  // one address, and the oldest is closed for that: the test's own pace, so that one is opened again.
  const held: Awaited<ReturnType<typeof openWith>>[] = [];
  const refused: string[] = [];
  let reopening = 0;
  let reopened = 0;
  let closed = 0;
  const openOne = async (): Promise<void> => {
    const h = await openWith(fresh);
    held.push(h);
    void h.closed.then(([code, why]) => {
      closed++;
      if (code === 4429 && why.startsWith(`more than ${MAX_UNAUTHENTICATED_PER_PEER} unauthenticated connections from`)) {
        reopening++;
        reopened++;
        void openOne().finally(() => reopening--);
      } else refused.push(`${code} ${why}`);
    });
  };
  try {
    for (let i = 0; i <= MAX_CONNECTIONS_PER_JOB; i++) await openOne();
    await waitFor("one of his connections to be refused", () => refused.length > 0 && reopening === 0, 30_000);
    // Every one left open is one the agent took: as many as the cap, and no more refused.
    await waitFor(`${MAX_CONNECTIONS_PER_JOB} of his connections open`, () => held.length - closed === MAX_CONNECTIONS_PER_JOB, 30_000);
    console.log(`his connections closed unread past ${MAX_UNAUTHENTICATED_PER_PEER} from one address, opened again: ${reopened}`);
    expect(refused).toEqual([`4429 more than ${MAX_CONNECTIONS_PER_JOB} step connections for job ${bobs}`]);
  } finally {
    // Whatever happened, nothing of his is left holding the node for the tests after this one.
    for (const h of held) h.ws.close();
    await c.api("DELETE", `/v1/jobs/${bobs}`);
  }
}, 60_000);

test("a launch whose environment has a variable no process can start with is refused naming MAX_ARG_STRLEN: his 13 MiB PATH of a million directories does not hold the agent's thread", async () => {
  // Unfixed: the agent looked his program up on that PATH on its thread before starting the rank
  // (to see whether it links MPI): 1.8 s of CPU per launch per node, 16 s of wall time at load 30,
  // so a node shared with her jobs missed its heartbeats. The controller sees only the env's digest.
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const bobs = await submitAs("ebbt_bob", { argv: ["sleep", "120"], output: "/dev/null" });
  await c.waitJob(bobs, ["RUNNING"]);
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const env = { PATH: Array.from({ length: 1_000_000 }, (_, i) => `/nonexistent${i % 10}`).join(":") };
  const spec = { jobId: bobs, stepId: 9, argv: ["no-such-program"], env, cwd: dir("ebbt_bob"), nodes: [{ name: node.name, addr: node.addr }], tasks: [1], jobNodes: [node.name], fanout: 8, pmi: "both", jobEnv: {} };
  const cred = signCredential(key, { jobId: bobs, stepId: 9, nodes: [node.name], expires: Date.now() + 60_000, argv: argvDigest(spec.argv), env: envDigest(env), jobEnv: envDigest({}), cwd: spec.cwd });
  const agent = c.agents.get(node.name)!.pid;
  const cpuMs = () => readFileSync(`/proc/${agent}/stat`, "utf8").split(") ")[1]!.split(" ").slice(11, 13).reduce((a, t) => a + Number(t), 0) * 10;
  const ws = new WebSocket(`ws://${node.addr}/v1/step`);
  const said: string[] = [];
  const answered = new Promise<void>((resolve) => (ws.onmessage = (ev) => (said.push(String(ev.data)), resolve())));
  await new Promise((resolve) => (ws.onopen = resolve));
  const before = cpuMs();
  ws.send(JSON.stringify({ t: "auth", cred }));
  for (const f of framesOf(JSON.stringify({ t: "launch", step: `${bobs}.9`, cred, spec }))) ws.send(f);
  await answered;
  const used = cpuMs() - before;
  console.log(`the agent's CPU for the launch: ${used} ms`);
  ws.close();
  expect(JSON.parse(said[0]!)).toMatchObject({ t: "error", kind: "launch", message: `environment variable PATH is ${env.PATH.length + 6} bytes: Linux starts no process with a variable over ${MAX_VARIABLE_BYTES} (MAX_ARG_STRLEN)` });
  await c.api("DELETE", `/v1/jobs/${bobs}`);
}, 120_000);

test("a launch of more than MAX_RANKS_PER_NODE ranks on a node is refused naming the cap: the agent does not spawn 1,025 of his processes in one turn of its thread", async () => {
  // Unfixed: the credential does not cover the counts, and the agent started every rank a launch
  // named on its node in one synchronous loop (--overcommit alone allowed a million tasks).
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const bobs = await submitAs("ebbt_bob", { argv: ["sleep", "120"], output: "/dev/null" });
  await c.waitJob(bobs, ["RUNNING"]);
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const env = { PATH: "/usr/bin:/bin" };
  const spec = { jobId: bobs, stepId: 11, argv: ["true"], env, cwd: dir("ebbt_bob"), nodes: [{ name: node.name, addr: node.addr }], tasks: [MAX_RANKS_PER_NODE + 1], jobNodes: [node.name], fanout: 8, pmi: "none", jobEnv: {} };
  const cred = signCredential(key, { jobId: bobs, stepId: 11, nodes: [node.name], expires: Date.now() + 60_000, argv: argvDigest(spec.argv), env: envDigest(env), jobEnv: envDigest({}), cwd: spec.cwd });
  const ws = new WebSocket(`ws://${node.addr}/v1/step`);
  const first = new Promise<string>((resolve) => (ws.onmessage = (ev) => resolve(String(ev.data))));
  await new Promise((resolve) => (ws.onopen = resolve));
  ws.send(JSON.stringify({ t: "launch", step: `${bobs}.11`, cred, spec }));
  expect(JSON.parse(await first)).toMatchObject({ t: "error", kind: "launch", message: `${MAX_RANKS_PER_NODE + 1} ranks on one node: an agent starts at most ${MAX_RANKS_PER_NODE} of a step's ranks on a node (MAX_RANKS_PER_NODE; Slurm's MaxTasksPerNode is 512)` });
  ws.close();
  await c.api("DELETE", `/v1/jobs/${bobs}`);
}, 60_000);

test("his launcher's fence.out pieces are counted against the step's KVS caps as they come: past 16 MiB his rank's fence fails at once, naming the byte cap, and the agent holds no more of them", async () => {
  // Unfixed (fence.out in pieces, protocol 13, before this): the agent kept every piece of a fence
  // his launcher sent, without end, until a last one (80 MiB of them: its RSS +137 MiB). The step
  // has a second node that does not answer (alone, a node finishes its fences without the launcher).
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const bobs = await submitAs("ebbt_bob", { argv: ["sleep", "600"], output: "/dev/null" });
  await c.waitJob(bobs, ["RUNNING"]);
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const env = { PATH: "/usr/bin:/bin", HOME: dir("ebbt_bob"), KVS_FILLER_KEYS: "0" };
  const spec = { jobId: bobs, stepId: 10, argv: [process.execPath, join(ROOT, "test/pmi/fixtures/kvs-filler.ts"), "v1", "m%r", "none", "10"], env, cwd: dir("ebbt_bob"), nodes: [{ name: node.name, addr: node.addr }, { name: "nowhere", addr: "127.0.0.1:1" }], tasks: [1, 0], jobNodes: [node.name], fanout: 8, pmi: "both", jobEnv: {} };
  const cred = signCredential(key, { jobId: bobs, stepId: 10, nodes: [node.name, "nowhere"], expires: Date.now() + 60_000, argv: argvDigest(spec.argv), env: envDigest(env), jobEnv: envDigest({}), cwd: spec.cwd });
  const agent = c.agents.get(node.name)!.pid;
  const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${agent}/status`, "utf8"))![1]) / 1024;
  const ws = new WebSocket(`ws://${node.addr}/v1/step`);
  const step = `${bobs}.10`;
  let out = "";
  const said: string[] = [];
  let fenceIn: () => void = () => {};
  let seq = -1;
  const fenced = new Promise<void>((resolve) => (fenceIn = resolve));
  let exited = false;
  ws.onmessage = (ev) => {
    const m = JSON.parse(String(ev.data));
    if (m.t === "fence.in") (seq = m.seq), fenceIn();
    if (m.t === "io" && m.fd === 1) out += m.data;
    else said.push(m.t === "io" ? m.data : JSON.stringify(m).slice(0, 300));
    if (m.t === "exit") exited = true;
  };
  await new Promise((resolve) => (ws.onopen = resolve));
  ws.send(JSON.stringify({ t: "auth", cred }));
  ws.send(JSON.stringify({ t: "launch", step, cred, spec }));
  await fenced;
  const before = rssMiB();
  let peak = before;
  const value = "v".repeat(900);
  for (let p = 0; p < 20; p++) {
    const kvs: Record<string, string> = {};
    for (let k = 0; k < 1150; k++) kvs[`p${p}-${k}`] = value;
    for (const f of framesOf(JSON.stringify({ t: "fence.out", step, seq, kvs, more: true }))) ws.send(f);
    if (p % 4 === 3) {
      await Bun.sleep(200);
      peak = Math.max(peak, rssMiB());
    }
  }
  // No last piece: the fence fails as the pieces pass the cap, and his rank prints what it saw.
  await waitFor("his rank's output and exit", () => exited && out.includes("\n"), 120_000).catch(() => console.log(said.join("\n")));
  peak = Math.max(peak, rssMiB());
  console.log(`the agent's RSS: ${before.toFixed(0)} MiB before the pieces, at most ${peak.toFixed(0)} MiB while they came`);
  ws.close();
  await c.api("DELETE", `/v1/jobs/${bobs}`);
  const rank = JSON.parse(out.trim() || "{}");
  expect({ fence: rank.fence, fenceMsg: rank.fenceMsg }).toEqual({ fence: -1, fenceMsg: `PMI_KVS_full:_a_step_holds_at_most_${KVS_MAX_BYTES}_bytes_of_keys_and_values_(ebb's_per-step_cap_KVS_MAX_BYTES)` });
}, 240_000);

test("the controller's sockets take no frame over 64 KiB; one user's launcher messages in pieces hold at most 16 MiB together: his connection past it is closed naming it, hers is served", async () => {
  // Unfixed: every launcher connection could hold a 16 MiB frame (a user may open a sixteenth of
  // the controller's descriptors as launchers), and a wrong-key agent socket as much before its close.
  const open = async (user: string) => {
    const ws = new WebSocket(`${c.url.replace("http", "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${tokens[user]}` } } as unknown as string[]);
    const closed = new Promise<[number, string]>((resolve) => (ws.onclose = (ev) => resolve([ev.code, ev.reason])));
    const said = new Promise<string>((resolve) => (ws.onmessage = (ev) => resolve(String(ev.data))));
    await new Promise((resolve) => (ws.onopen = resolve));
    return { ws, closed, said };
  };
  const piece = new Uint8Array(64 << 10).fill(120);
  const tenMiB = (ws: WebSocket) => {
    for (let i = 0; i < 160; i++) ws.send(piece);
  };
  const big = await open("ebbt_bob");
  big.ws.send("x".repeat(1 << 20));
  expect((await big.closed)[0]).toBe(1009);
  const [a, b] = [await open("ebbt_bob"), await open("ebbt_bob")];
  tenMiB(a.ws);
  tenMiB(b.ws);
  const first = await Promise.race([a.closed, b.closed]);
  expect(first).toEqual([4413, "a message over the 16777216 bytes ebbt_bob's launcher connections' unfinished messages may hold"]);
  const hers = await open("ebbt_alice");
  tenMiB(hers.ws);
  hers.ws.send("");
  expect(JSON.parse(await hers.said)).toEqual({ t: "error", code: "invalid_request", message: "invalid message: message is not JSON" });
  for (const s of [a, b, hers]) s.ws.close();
  expect(c.daemonLogs()).toContain("a frame over 65536 bytes (FRAME_MAX)");
}, 60_000);

test("a launcher socket that reads nothing of its answers is cut off past 1 MiB unread: a flood of bad messages does not pile up in the controller", async () => {
  // Unfixed: the controller kept what it could not send, ~15 MB per connection (Bun's own cap; 20
  // such grew it by 305 MB), and a user may hold a sixteenth of its descriptors as launchers.
  const payload = Buffer.from('{"t":"zz"}');
  const frame = Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
  const burst = Buffer.concat(Array(10_000).fill(frame));
  const cut = await new Promise<boolean>((resolve) => {
    const s = connect({ host: "127.0.0.1", port: c.port }, () =>
      s.write(`GET /v1/launcher HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.ebbt_bob}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${btoa("0123456789abcdef")}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
    );
    s.once("data", () => {
      s.pause();
      let bursts = 0;
      const pump = () => {
        while (bursts++ < 100 && s.write(burst));
      };
      s.on("drain", pump);
      pump();
    });
    s.on("error", () => {});
    s.on("close", () => resolve(true));
    setTimeout(() => (s.destroy(), resolve(false)), 30_000);
  });
  expect(cut).toBe(true);
  expect(c.daemonLogs()).toContain(`over the ${1 << 20} a launcher may leave unread`);
}, 60_000);

/** The file's text once it ends a line. */
async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    try {
      const text = readFileSync(path, "utf8");
      if (text.endsWith("\n")) return text;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${path} never written`);
}

test("one user's requests whose bodies come slowly hold at most BODIES_PER_USER connections at once: his 300 one-byte trickles past it are answered 429 naming the cap; hers is served", async () => {
  // Unfixed: a body counted only its bytes against his 16 MiB, so 300 bodies of one byte each held
  // 300 of the controller's descriptors (and as many as he could open), none answered.
  const { hostname, port } = new URL(c.url);
  const answers: string[] = [];
  const socks = await Promise.all(
    Array.from({ length: 300 }, () =>
      new Promise<import("node:net").Socket>((resolve) => {
        const s = connect(Number(port), hostname, () => {
          s.write(`POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nAuthorization: Bearer ${tokens.ebbt_bob}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
          resolve(s);
        });
        let text = "";
        s.on("data", (d) => {
          text += d.toString();
          if (text.includes("\r\n\r\n{")) answers.push(text);
        });
        s.on("error", () => {});
      }),
    ),
  );
  try {
    await waitFor(`${300 - BODIES_PER_USER} of his requests to be refused`, () => answers.length >= 300 - BODIES_PER_USER, 60_000);
    expect(answers.length).toBe(300 - BODIES_PER_USER);
    expect(answers[0]).toStartWith("HTTP/1.1 429");
    expect(answers[0]).toContain(`the most one user's may (${BODIES_PER_USER})`);
    const hers = await submitAs("ebbt_alice", { argv: ["true"] });
    expect((await c.waitJob(hers, ENDED, 30_000)).state).toBe("COMPLETED");
  } finally {
    for (const s of socks) s.destroy();
  }
}, 120_000);

test("a job or step asking for more than MAX_RANKS_PER_NODE ranks on a node is refused at submission, naming the cap, not left to fail at its launch", async () => {
  // Unfixed: accepted (201), then each launch was refused by the agent; a pending job waited for nodes first.
  const cap = `${MAX_RANKS_PER_NODE + 1} ranks on one node: an agent starts at most ${MAX_RANKS_PER_NODE} of a step's ranks on a node (MAX_RANKS_PER_NODE`;
  for (const body of [
    { argv: ["true"], tasks: MAX_RANKS_PER_NODE + 1, overcommit: true },
    { argv: ["true"], nodes: 1, tasksPerNode: MAX_RANKS_PER_NODE + 1, overcommit: true },
    { script: "#!/bin/sh\ntrue\n", tasks: MAX_RANKS_PER_NODE + 1, overcommit: true },
  ]) {
    const r = await c.api("POST", "/v1/jobs", { cwd: dir("ebbt_bob"), ...body }, tokens.ebbt_bob);
    expect({ body, status: r.status, message: r.json.error?.message }).toEqual({ body, status: 400, message: expect.stringContaining(cap) });
  }
  const bobs = await submitAs("ebbt_bob", { argv: ["sleep", "60"], output: "/dev/null" });
  await c.waitJob(bobs, ["RUNNING"]);
  const step = await c.api("POST", `/v1/jobs/${bobs}/steps`, { argv: ["true"], tasks: MAX_RANKS_PER_NODE + 1, overcommit: true, cwd: dir("ebbt_bob"), envDigest: "0".repeat(64) }, tokens.ebbt_bob);
  expect({ status: step.status, message: step.json.error?.message }).toEqual({ status: 400, message: expect.stringContaining(cap) });
  await c.api("DELETE", `/v1/jobs/${bobs}`);
}, 60_000);

test("the API counts a variable, an argument, a path and a script in UTF-8 bytes: 128 Ki characters of 'é' (256 KiB) are refused at submission naming MAX_ARG_STRLEN, not at the job's start", async () => {
  // Unfixed: the caps counted UTF-16 characters, so a value of 131,072 "é" (262,144 bytes) was
  // accepted and its job failed at start (E2BIG); a 4-byte character passed a cap at 4x its bytes.
  const refused = async (body: Record<string, unknown>) => {
    const r = await c.api("POST", "/v1/jobs", { cwd: dir("ebbt_bob"), ...body }, tokens.ebbt_bob);
    return { status: r.status, message: String(r.json.error?.message) };
  };
  expect(await refused({ argv: ["true"], env: { X: "é".repeat(65_535) } })).toEqual({ status: 400, message: expect.stringContaining(`NAME=value is ${MAX_VARIABLE_BYTES + 1} bytes, over the ${MAX_VARIABLE_BYTES} (Linux's MAX_ARG_STRLEN`) });
  expect(await refused({ argv: ["true"], env: { X: "é".repeat(131_072) } })).toEqual({ status: 400, message: expect.stringContaining(`is 262144 bytes in UTF-8, over the ${MAX_VARIABLE_BYTES}`) });
  expect(await refused({ argv: ["true", "😀".repeat(20_000)] })).toEqual({ status: 400, message: expect.stringContaining("is 80000 bytes in UTF-8, over the 65536") });
  expect(await refused({ argv: ["true"], output: "é".repeat(3000) })).toEqual({ status: 400, message: expect.stringContaining("is 6000 bytes in UTF-8, over the 4096") });
  expect(await refused({ script: `#!/bin/sh\n#${"é".repeat(600_000)}\n` })).toEqual({ status: 400, message: expect.stringContaining("is 1200012 bytes in UTF-8, over the 1048576") });
  // At the cap in bytes a job still starts and sees its value whole.
  const ok = await submitAs("ebbt_bob", { script: '#!/bin/sh\nprintf %s "$X" | wc -c\n', output: "bytes.out", env: { PATH: "/usr/bin:/bin", X: "é".repeat(65_534) } });
  expect((await c.waitJob(ok, ENDED, 30_000)).state).toBe("COMPLETED");
  expect(readFileSync(join(dir("ebbt_bob"), "bytes.out"), "utf8").trim()).toBe("131068");
}, 60_000);

test("the agent's thread searches no directory of his PATH for his program: his look-up process searches the first PATH_DIRS_SEARCHED, and each rank's shell all of them after the drop", async () => {
  // Unfixed: each rank's direct start stat'ed every directory of the job's PATH on the agent's
  // thread: 16 ranks x 2,000 directories (13,158 stats seen under strace before the node went DOWN;
  // 21,134 for 1,000 directories); a 128 KiB PATH holds 65,536, ~120 ms a rank, and a node may
  // start 1,024 ranks. Then once per launch, the first PATH_DIRS_SEARCHED (the direct start's
  // lookup and the MPI check's): a path there that hangs held the thread all the same. strace counts
  // the agent's own stats; its children (his look-up, his ranks' shells) are not followed.
  const agent = c.agents.get((await c.api("GET", "/v1/nodes")).json.nodes[0].name)!.pid;
  const statsOf = async (dirs: number) => {
    const PATH = [...Array.from({ length: dirs }, (_, i) => `/nonexistent${i}`), "/usr/bin", "/bin"].join(":");
    const log = join(base, `strace-${dirs}.log`);
    const threads = readdirSync(`/proc/${agent}/task`).flatMap((t) => ["-p", t]);
    const strace = Bun.spawn(["strace", "-qq", "-e", "trace=%%stat", "-e", "signal=none", "-o", log, ...threads], { stdio: ["ignore", "ignore", "pipe"] });
    await waitFor("strace attached", () => existsSync(log), 30_000);
    await Bun.sleep(500);
    const job = await submitAs("ebbt_bob", { argv: ["true"], tasks: 16, overcommit: true, output: "/dev/null", env: { PATH } });
    const end = await c.waitJob(job, ENDED, 60_000);
    strace.kill("SIGINT");
    await strace.exited;
    const stats = readFileSync(log, "utf8").split("\n").filter((l) => l.includes('"/nonexistent')).length;
    return { state: end.state, stats };
  };
  const long = await statsOf(2000);
  const short = await statsOf(1000);
  console.log(`the agent's stats of PATH directories for 16 ranks: ${long.stats} with 2,000 of them (${long.state}), ${short.stats} with 1,000 (${short.state})`);
  // (The ranks' state is not asserted: the agent traced may miss a heartbeat at high load.)
  expect({ long: long.stats, short: short.stats }).toEqual({ long: 0, short: 0 });
}, 180_000);

test("his launcher's valid messages to his step's agent are paced at the agent's --step-rate: past it the agent pauses reading his connection, loses nothing, and says so naming the limit", async () => {
  // Unfixed: the agent read and parsed all he sent as fast as he sent it, on the thread that serves
  // every job on the node (80 MiB of valid fence pieces at load 40: the node missed its heartbeats).
  // A node of its own at 1 MiB a second (the default, STEP_MIB_PER_SECOND, is more than this
  // loaded machine's agent reads), and a raw socket: Bun's WebSocket client sends slower still.
  c.startAgent("paced", ["--step-rate", "1"]);
  await waitFor("node paced up", async () => (await c.api("GET", "/v1/nodes")).json.nodes.some((n: { name: string; state: string }) => n.name === "paced" && n.state === "IDLE"), 90_000);
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const hers = await submitAs("ebbt_alice", { argv: ["sleep", "8"], output: "/dev/null", nodelist: ["paced"] });
  const bobs = await submitAs("ebbt_bob", { argv: ["sleep", "600"], output: "/dev/null", nodelist: ["paced"] });
  await c.waitJob(bobs, ["RUNNING"]);
  const node = (await c.api("GET", "/v1/nodes")).json.nodes.find((n: { name: string }) => n.name === "paced");
  const env = { PATH: "/usr/bin:/bin" };
  const spec = { jobId: bobs, stepId: 12, argv: ["sleep", "60"], env, cwd: dir("ebbt_bob"), nodes: [{ name: node.name, addr: node.addr }], tasks: [1], jobNodes: [node.name], fanout: 8, pmi: "none", jobEnv: {} };
  const cred = signCredential(key, { jobId: bobs, stepId: 12, nodes: [node.name], expires: Date.now() + 60_000, argv: argvDigest(spec.argv), env: envDigest(env), jobEnv: envDigest({}), cwd: spec.cwd });
  const step = `${bobs}.12`;
  /** A masked text frame (mask 0: the payload as it is). */
  const frame = (text: string) => {
    const p = Buffer.from(text);
    const head = p.length < 126 ? Buffer.from([0x81, 0x80 | p.length]) : Buffer.from([0x81, 0x80 | 126, p.length >> 8, p.length & 255]);
    return Buffer.concat([head, Buffer.alloc(4), p]);
  };
  // 128 acks of 60 KB (a message's unknown fields are dropped after the parse), 7.5 MiB, then a
  // message the agent refuses: its close (4400) says the agent has read all before it.
  const ack = frame(JSON.stringify({ t: "io.ack", step, chars: 1, pad: "x".repeat(60_000) }));
  const messages = 128;
  const [host, port] = node.addr.split(":");
  const t0 = performance.now();
  const closeCode = await new Promise<number | string>((resolve) => {
    const s = connect({ host, port: Number(port) }, () =>
      s.write(`GET /v1/step HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${btoa("0123456789abcdef")}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
    );
    let seen = Buffer.alloc(0);
    let upgraded = false;
    s.on("data", (d: Buffer) => {
      seen = Buffer.concat([seen, d]);
      const body = seen.indexOf("\r\n\r\n");
      if (!upgraded && body >= 0) {
        upgraded = true;
        s.write(frame(JSON.stringify({ t: "launch", step, cred, spec })));
        for (let i = 0; i < messages; i++) s.write(ack);
        s.write(frame(JSON.stringify({ t: "no-such-message" })));
      }
      // The agent's close frame (0x88, then its length) carries its code.
      for (let at = seen.indexOf(0x88, body + 4); at >= 0 && upgraded; at = seen.indexOf(0x88, at + 1)) if (seen.length >= at + 4 && seen[at + 1]! < 126) return resolve(seen.readUInt16BE(at + 2));
    });
    s.on("error", () => {});
    s.on("close", () => resolve("closed"));
  });
  console.log(`${messages} acks of 60 KB at --step-rate 1 read in ${(performance.now() - t0).toFixed(0)} ms`);
  expect(closeCode).toBe(4400);
  expect(c.daemonLogs()).toContain(`(user ebbt_bob) from 127.0.0.1`);
  expect(c.daemonLogs()).toContain(`user ebbt_bob's step connections sent more than 1 MiB a second (--step-rate, STEP_MIB_PER_SECOND; a message counts ${STEP_MESSAGE_COST} bytes more)`);
  expect((await c.waitJob(hers, ENDED, 60_000)).state).toBe("COMPLETED");
  await c.api("DELETE", `/v1/jobs/${bobs}`);
}, 180_000);
