/**
 * `ebb up --hosts` against real OpenSSH servers on 127.0.0.2 and 127.0.0.3 (h1, h2; h3 at
 * 127.0.0.4 has none): the binary is copied to --remote-path and not again when it is there,
 * agents register under the hosts' names, an MPICH program runs across them, the cluster key is
 * in no process's command line, a down host is named with ssh's error, --require-all makes that
 * fatal, a dead ssh link stops its agent, an elastic Jacobi run (`bun jacobi.ts` with no bun on
 * any PATH: the copied binary's runtime) grows onto the second host and shrinks back with the
 * fixed-size answer, and Ctrl-C says "stopping", nothing alarming, and leaves no process behind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandLines, ROOT, runProcess, waitFor } from "../support/cluster.ts";
import { holdEnd } from "../support/hold-end.ts";
import { SshHosts } from "../support/sshd.ts";
import { buildEbb } from "../../scripts/build.ts";
import { mpi } from "../mpi/programs.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-up-hosts-"));
const hold = holdEnd(() => dir);
// The compiled binary (the one ebb up copies), built apart from dist/ so that no other test's build overwrites it meanwhile.
const buildDir = mkdtempSync(join(tmpdir(), "ebb-up-hosts-build-"));
const EBB = join(buildDir, "ebb");
const remotePath = join(dir, "remote", "bin", "ebb");
let hosts: SshHosts;
const hello = await mpi("hello");
const JACOBI = join(ROOT, "examples/jacobi.ts");

beforeAll(async () => {
  await buildEbb(EBB);
  hosts = await new SshHosts(["127.0.0.2", "127.0.0.3", "127.0.0.4"]).start(["h1", "h2"]);
}, 300_000);
afterAll(async () => {
  await hosts?.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(buildDir, { recursive: true, force: true });
});

/** Which "host" a process runs on: the sshd (h1, h2) whose session it descends from. */
function remoteHostOf(pid: number): string | undefined {
  const sshds = new Map([hosts.pid("h1"), hosts.pid("h2")].map((p, i) => [p, `h${i + 1}`]));
  for (let p = pid, depth = 0; p > 1 && depth < 64; depth++) {
    if (sshds.has(p)) return sshds.get(p);
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      p = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The processes that belong to this test's remote side: agents run from remotePath, and sshd sessions. */
const remoteLeftovers = () => commandLines().filter((p) => p.cmd.includes(dir) || [hosts.pid("h1"), hosts.pid("h2")].includes(p.ppid));

class Up {
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  stdout = "";
  stderr = "";
  readonly state: string;
  readonly ended: Promise<number>;

  constructor(args: string[], listen = "127.0.0.1:0") {
    this.state = join(dir, `state-${Math.random().toString(36).slice(2)}`);
    // In a process group of its own, so that interrupt() is a terminal's Ctrl-C: SIGINT to the whole group.
    this.proc = Bun.spawn([EBB, "up", "--ssh-opts", `-F ${hosts.config}`, "--remote-path", remotePath, "--listen", listen, "--state-dir", this.state, ...args], {
      env: { ...process.env, EBB_LOG: "warn" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    const drain = async (s: ReadableStream<Uint8Array>, into: "stdout" | "stderr") => {
      const d = new TextDecoder();
      for await (const chunk of s) this[into] += d.decode(chunk, { stream: true });
    };
    this.ended = Promise.all([drain(this.proc.stdout, "stdout"), drain(this.proc.stderr, "stderr")]).then(() => this.proc.exited);
  }

  until(text: string): Promise<true> {
    return waitFor(`"${text}" from ebb up`, async () => {
      if (this.proc.exitCode !== null) throw new Error(`ebb up exited ${this.proc.exitCode}: ${this.stdout}${this.stderr}`);
      return this.stdout.includes(text) || this.stderr.includes(text) || undefined;
    }, 180_000);
  }

  /** Ctrl-C at a terminal (SIGINT to ebb up's process group): it says it stops, and nothing alarming; exits 0. */
  async ctrlC(): Promise<void> {
    const before = this.stderr.length;
    process.kill(-this.proc.pid, "SIGINT");
    expect(await this.ended).toBe(0);
    const after = this.stderr.slice(before);
    expect(after).toContain("ebb up: stopping\n");
    expect(after).not.toContain("ssh session ended");
  }

  /** Ctrl-C, and no process is left on the hosts. */
  async interrupt(): Promise<void> {
    await this.ctrlC();
    await waitFor("no process left on the hosts", () => remoteLeftovers().length === 0);
  }

  ebb(args: string[]) {
    // `ebb run` ends its flags at the program: the state dir goes right after the command.
    return runProcess([EBB, args[0]!, "--state-dir", this.state, ...args.slice(1)], { env: { ...process.env, EBB_CONTROLLER: "", EBB_LOG: "warn" } });
  }
}

test("two hosts: copied, registered by name, an MPICH program across them, no key in any argv, and Ctrl-C leaves nothing", async () => {
  const up = new Up(["--hosts", "h1,h2"]);
  try {
    await up.until("ebb cluster is up: 2 of 2 hosts (h1, h2)");
    // Each host's copy says the binary's size, and how long it took.
    const size = `${(statSync(EBB).size / 2 ** 20).toFixed(1)} MiB`;
    for (const h of ["h1", "h2"]) {
      expect(up.stderr).toContain(`ebb up: ${h}: copying ebb (${size}) to ${remotePath}\n`);
      expect(up.stderr).toMatch(new RegExp(`ebb up: ${h}: copied ${size} in \\d+\\.\\d s \\(\\d+\\.\\d MiB/s\\)\n`));
    }
    const nodes = JSON.parse((await up.ebb(["nodes", "--json"])).stdout).nodes.map((n: any) => [n.name, n.state, n.addr.replace(/:\d+$/, "")]);
    expect(nodes).toEqual([
      ["h1", "IDLE", "127.0.0.2"],
      ["h2", "IDLE", "127.0.0.3"],
    ]);

    const key = readFileSync(join(up.state, "cluster.key"), "utf8").trim();
    const run = await up.ebb(["run", "-N", "2", "-n", "4", hello!]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = run.stdout.trim().split("\n").sort();
    expect(lines).toHaveLength(4);
    expect(new Set(lines.map((l) => /node=(\S+)/.exec(l)?.[1]))).toEqual(new Set(["h1", "h2"]));
    expect(lines.every((l) => l.includes("size=4 sum=6"))).toBe(true);

    // A job that is running when Ctrl-C comes: its ranks must go too.
    const sleeper = Bun.spawn([EBB, "run", "--state-dir", up.state, "-N", "2", "sleep", "3171"], { env: { ...process.env, EBB_CONTROLLER: "" }, stdout: "ignore", stderr: "ignore" });
    await waitFor("the sleeps to run on both hosts", () => commandLines().filter((p) => p.cmd === "sleep 3171").length === 2);
    expect(commandLines().filter((p) => p.cmd.includes(key))).toEqual([]);
    expect(remoteLeftovers().some((p) => p.cmd.includes(`${remotePath} agent`))).toBe(true);

    await up.ctrlC();
    await sleeper.exited;
    await waitFor("no process left on the hosts", () => remoteLeftovers().length === 0 && !commandLines().some((p) => p.cmd === "sleep 3171"));
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("--tls: a cluster CA here, a certificate per host over ssh's stdin; the controller, the agents' links and step ports speak TLS; an MPICH program runs across them", async () => {
  const up = new Up(["--hosts", "h1,h2", "--tls"]);
  try {
    await up.until("ebb cluster is up: 2 of 2 hosts (h1, h2)");
    expect(up.stdout).toContain(`the cluster CA is ${join(up.state, "ca.pem")}`);
    const url = readFileSync(join(up.state, "controller.url"), "utf8").trim();
    expect(url).toStartWith("https://");
    // One certificate per host, naming it and its role; its key reached the host in a 0600 file, never in an argument.
    for (const h of ["h1", "h2"]) {
      const cert = new X509Certificate(readFileSync(join(up.state, "tls", `agent-${h}.pem`)));
      expect(cert.subjectAltName?.split(", ").sort()).toEqual(["DNS:ebb-agent", `DNS:${h}`]);
      expect(cert.verify(new X509Certificate(readFileSync(join(up.state, "ca.pem"))).publicKey)).toBe(true);
      const remoteKey = join(`${remotePath}.d`, h, "tls", "key.pem");
      expect(statSync(remoteKey).mode & 0o777).toBe(0o600);
      expect(readFileSync(remoteKey, "utf8")).toBe(readFileSync(join(up.state, "tls", `agent-${h}.key`), "utf8"));
    }
    expect(commandLines().filter((p) => p.cmd.includes("PRIVATE KEY") || p.cmd.includes("BEGIN CERTIFICATE"))).toEqual([]);

    const nodes = JSON.parse((await up.ebb(["nodes", "--json"])).stdout).nodes;
    expect(nodes.map((n: any) => [n.name, n.state])).toEqual([
      ["h1", "IDLE"],
      ["h2", "IDLE"],
    ]);
    // Step ports answer only TLS.
    for (const n of nodes) expect(await fetch(`http://${n.addr}/`).then(() => "answered", () => "failed")).toBe("failed");
    expect(await fetch(`${url.replace(/^https:/, "http:")}/v1/health`).then(() => "answered", () => "failed")).toBe("failed");

    const run = await up.ebb(["run", "-N", "2", "-n", "4", hello!]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = run.stdout.trim().split("\n").sort();
    expect(lines).toHaveLength(4);
    expect(new Set(lines.map((l) => /node=(\S+)/.exec(l)?.[1]))).toEqual(new Set(["h1", "h2"]));
    expect(lines.every((l) => l.includes("size=4 sum=6"))).toBe(true);

    await up.interrupt();
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("an elastic Jacobi run with `bun jacobi.ts` and no bun anywhere grows onto the other host and shrinks back; its answer is the fixed-size run's, bit for bit", async () => {
  // The program is found at the same path on every host (as under Slurm or Flux: a shared file
  // system, or the same directory everywhere); ebb ships the client's working directory and
  // environment with the job, not its files. A copy outside the checkout, run with a PATH that has
  // no bun: each host's `bun` is the copied binary's runtime, ebb/comm the one inside it.
  const app = join(dir, "app");
  mkdirSync(app, { recursive: true });
  cpSync(JACOBI, join(app, "jacobi.ts"));
  const bare = { PATH: "/usr/bin:/bin", HOME: dir, EBB_LOG: "warn" };
  expect(Bun.which("bun", { PATH: bare.PATH })).toBeNull();
  const up = new Up(["--hosts", "h1,h2"]);
  try {
    await up.until("ebb cluster is up: 2 of 2 hosts (h1, h2)");
    // Paced (400 x 15 ms) for both resizes to land mid-run on a quiet machine; held (--hold-end)
    // until they have, however loaded it is.
    const iters = ["--iters", "400"];
    const fixed = await runProcess([EBB, "run", "--state-dir", up.state, "-N", "1", "--", "bun", "jacobi.ts", ...iters], { cwd: app, env: bare });
    expect({ code: fixed.code, stderr: fixed.stderr }).toEqual({ code: 0, stderr: "" });
    const want = /checksum=(\w+) heat=(\S+)/.exec(fixed.stdout);
    expect(want).not.toBeNull();

    const run = Bun.spawn([EBB, "run", "--state-dir", up.state, "-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", "bun", "jacobi.ts", ...iters, "--sleep", "15", "--every", "20", ...hold.args()], {
      cwd: app,
      env: bare,
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const reading = (async () => {
      const d = new TextDecoder();
      for await (const chunk of run.stdout) out += d.decode(chunk, { stream: true });
    })();
    await waitFor("jacobi to run on 1 rank", () => {
      if (run.exitCode !== null) throw new Error(`ebb run ended early (${run.exitCode}): ${out}`);
      return out.includes("on 1 ranks") || undefined;
    }, 120_000);
    const jobs = JSON.parse((await up.ebb(["queue", "--json"])).stdout).jobs;
    expect(jobs).toHaveLength(1);
    const id = String(jobs[0].id);
    // Each rank is the binary ebb up copied there, running as the agent's fallback bun.
    const ranks = () => commandLines().filter((p) => p.cmd.startsWith(`${remotePath} exec --bun -- jacobi.ts ${iters.join(" ")} --sleep`));
    for (const n of [2, 1]) {
      const r = await up.ebb(["resize", id, "--nodes", String(n), "--wait", "--json"]);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      const a = JSON.parse(r.stdout);
      expect([a.fromNodes, a.toNodes, a.state]).toEqual([3 - n, n, "COMMITTED"]);
      if (n === 2) {
        // One rank on each host: the joining one was started by the other host's agent.
        await waitFor("a rank on each host", () => ranks().map((p) => remoteHostOf(p.pid)).sort().join() === "h1,h2");
        // Each rank advertises to its peers the address its node's agent is reached at.
        const nodeHost = (pid: number) => /(?:^|\0)EBB_NODE_HOST=([^\0]*)/.exec(readFileSync(`/proc/${pid}/environ`, "utf8"))?.[1];
        expect(ranks().map((p) => [remoteHostOf(p.pid), nodeHost(p.pid)]).sort()).toEqual([["h1", "127.0.0.2"], ["h2", "127.0.0.3"]]);
      }
    }
    hold.release();
    expect(await run.exited).toBe(0);
    await reading;
    expect(out).toContain("now 2 ranks (was 1)");
    expect(out).toContain("now 1 ranks (was 2)");
    const got = /checksum=(\w+) heat=(\S+)/.exec(out);
    expect(got?.slice(1)).toEqual(want!.slice(1));
    const detail = JSON.parse((await up.ebb(["show", id, "--json"])).stdout);
    expect(new Set(detail.allocationHistory.map((h: any) => h.node))).toEqual(new Set(["h1", "h2"]));
    await up.interrupt();
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("--controller-on-first --tls: the controller on h1 serves HTTPS with a certificate made here; agents and clients here verify it against the CA", async () => {
  const up = new Up(["--hosts", "h1,h2", "--controller-on-first", "--tls", "--heartbeat", "1"], "0.0.0.0:0");
  try {
    await up.until("ebb cluster is up: 2 of 2 hosts (h1, h2); the controller on h1");
    const url = readFileSync(join(up.state, "controller.url"), "utf8").trim();
    expect(url).toMatch(/^https:\/\/127\.0\.0\.2:\d+$/);
    // Its certificate and key reached h1 in 0600 files; the key is in no command line.
    const there = join(`${remotePath}.d`, "controller", "tls");
    expect(readFileSync(join(there, "cert.pem"), "utf8")).toBe(readFileSync(join(up.state, "tls", "controller-h1.pem"), "utf8"));
    expect(statSync(join(there, "key.pem")).mode & 0o777).toBe(0o600);
    expect(commandLines().filter((p) => p.cmd.includes("PRIVATE KEY"))).toEqual([]);
    const ca = readFileSync(join(up.state, "ca.pem"), "utf8");
    expect((await fetch(`${url}/v1/health`, { tls: { ca, checkServerIdentity: () => undefined } } as RequestInit)).status).toBe(200);
    expect(await fetch(`${url.replace(/^https:/, "http:")}/v1/health`).then(() => "answered", () => "failed")).toBe("failed");

    const run = await up.ebb(["run", "-N", "2", "-n", "4", hello!]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(new Set(run.stdout.trim().split("\n").map((l) => /node=(\S+)/.exec(l)?.[1]))).toEqual(new Set(["h1", "h2"]));
    await up.interrupt();
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("a host whose sshd is down is named with ssh's error; the binary already there is not copied again; a dead ssh link stops its agent", async () => {
  const up = new Up(["--hosts", "h1,h3"]);
  try {
    await up.until("ebb cluster is up: 1 of 2 hosts (h1); failed: h3");
    expect(up.stderr).toContain(`ebb up: h3: FAILED: ssh: connect to host 127.0.0.4 port ${hosts.port}: Connection refused`);
    expect(up.stderr).not.toContain("copying");
    const agent = await waitFor("h1's agent", () => remoteLeftovers().find((p) => p.cmd.includes(`${remotePath} agent`)));
    // Cut h1's link: kill the ssh client ebb up started for it.
    const ssh = commandLines().find((p) => p.ppid === up.proc.pid && p.cmd.startsWith("ssh ") && p.cmd.includes(" h1 "));
    expect(ssh).toBeDefined();
    process.kill(ssh!.pid, "SIGKILL");
    await waitFor("h1's agent to stop by itself", () => !commandLines().some((p) => p.pid === agent.pid));
    await up.until("h1: the agent's ssh session ended");
    await up.interrupt();
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("--controller-on-first: the controller runs on h1 over ssh, agents on h1 and h2 find it, clients here find it, and Ctrl-C stops it all", async () => {
  const up = new Up(["--hosts", "h1,h2", "--controller-on-first", "--heartbeat", "1"], "0.0.0.0:0");
  try {
    await up.until("ebb cluster is up: 2 of 2 hosts (h1, h2); the controller on h1");
    // The URL names the address ssh reached h1 at; this state dir holds it, with the token and key.
    const url = /API: +(http:\/\/127\.0\.0\.2:\d+)\/v1/.exec(up.stdout)?.[1];
    expect(url).toBeDefined();
    expect(readFileSync(join(up.state, "controller.url"), "utf8").trim()).toBe(url!);
    expect(up.stdout).toContain(`clients here find it through ${join(up.state, "controller.url")}`);
    // The controller is h1's (a child of its sshd session), not ebb up's, and holds its own state dir there.
    const controllers = remoteLeftovers().filter((p) => p.cmd.startsWith(`${remotePath} controller`));
    expect(controllers.map((p) => remoteHostOf(p.pid))).toEqual(["h1"]);
    expect(controllers[0]!.cmd).toContain("--heartbeat 1");
    expect(existsSync(join(`${remotePath}.d`, "controller", "controller.lock"))).toBe(true);
    expect(readFileSync(join(`${remotePath}.d`, "controller", "token"), "utf8")).toBe(readFileSync(join(up.state, "token"), "utf8"));
    const agents = remoteLeftovers().filter((p) => p.cmd.startsWith(`${remotePath} agent`));
    expect(agents.map((p) => remoteHostOf(p.pid)).sort()).toEqual(["h1", "h2"]);
    expect(agents.every((p) => p.cmd.includes(`--controller ${url}`))).toBe(true);

    const nodes = JSON.parse((await up.ebb(["nodes", "--json"])).stdout).nodes.map((n: any) => [n.name, n.state]);
    expect(nodes).toEqual([
      ["h1", "IDLE"],
      ["h2", "IDLE"],
    ]);
    const run = await up.ebb(["run", "-N", "2", "-n", "4", hello!]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(new Set(run.stdout.trim().split("\n").map((l) => /node=(\S+)/.exec(l)?.[1]))).toEqual(new Set(["h1", "h2"]));
    const key = readFileSync(join(up.state, "cluster.key"), "utf8").trim();
    const token = readFileSync(join(up.state, "token"), "utf8").trim();
    expect(commandLines().filter((p) => p.cmd.includes(key) || p.cmd.includes(token))).toEqual([]);
    // A second ebb up on this state dir is refused while this one runs.
    const second = await runProcess([EBB, "up", "--hosts", "h2", "--controller-on-first", "--ssh-opts", `-F ${hosts.config}`, "--state-dir", up.state], { env: { ...process.env, EBB_LOG: "warn" } });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`is in use by another controller (pid ${up.proc.pid}`);

    await up.interrupt();
    expect(existsSync(join(`${remotePath}.d`, "controller", "controller.lock"))).toBe(false);
    expect(existsSync(join(up.state, "controller.lock"))).toBe(false);
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("a host file: user@host, host:port and slots=N reach ssh and the agent; --ssh-user applies where no user is given; --agent-config reaches the agents", async () => {
  const file = join(dir, "hosts.txt");
  writeFileSync(file, [`# two lab hosts and one refused`, `root@h1 slots=3`, `root@127.0.0.3:${hosts.port}   # by address and port`, `h2   # logs in as --ssh-user, whom sshd refuses`, ""].join("\n"));
  // Host rules for h1 only, the defaults left out (this machine is loaded): a site command that always fails makes it busy; the other node judges nothing.
  const config = join(dir, "agent.json");
  writeFileSync(config, JSON.stringify({ nodes: { h1: { hostStates: { interval: 0.5, dwell: 1, rules: { "cpu.other": false, "psi.mem": false, users: false, "cmd.busy": { run: ["/bin/false"], busy: 1, every: 0.5 } } } } } }));
  const bad = join(dir, "bad-agent.json");
  writeFileSync(bad, JSON.stringify({ nodes: { h1: { hostStates: { rules: { "cpu.other": { busy: 0.5, overloaded: 0.2 } } } } } }));
  const refused = new Up(["--hostfile", file, "--agent-config", bad]);
  expect(await refused.ended).not.toBe(0);
  expect(refused.stderr).toBe(`ebb up: --agent-config ${bad}: nodes.h1.hostStates.rules.cpu.other.overloaded: must be at least busy (0.5)\n`);
  const up = new Up(["--hostfile", file, "--ssh-user", "nosuchuser", "--agent-config", config]);
  try {
    await up.until("ebb cluster is up: 2 of 3 hosts (h1, 127.0.0.3); failed: h2");
    expect(up.stderr).toContain("ebb up: h2: FAILED: nosuchuser@127.0.0.3: Permission denied (publickey)");
    const nodes = JSON.parse((await up.ebb(["nodes", "--json"])).stdout).nodes.map((n: any) => [n.name, n.cpus, n.addr.replace(/:\d+$/, "")]);
    expect(nodes.find((n: any) => n[0] === "h1")).toEqual(["h1", 3, "127.0.0.2"]);
    expect(nodes.find((n: any) => n[0] === "127.0.0.3")?.[2]).toBe("127.0.0.3");
    const host = await waitFor("h1 busy by its rule", async () => {
      const all = JSON.parse((await up.ebb(["nodes", "--json"])).stdout).nodes;
      const h1 = all.find((n: any) => n.name === "h1").host;
      return h1.state === "busy" ? { h1, other: all.find((n: any) => n.name === "127.0.0.3").host } : undefined;
    }, 60_000);
    expect(host.h1.rule).toBe("cmd.busy >= 1 for 1 s");
    expect(host.other).toMatchObject({ state: "free", rule: "" });
    await up.interrupt();
  } finally {
    if (up.proc.exitCode === null) up.proc.kill("SIGKILL");
  }
}, 400_000);

test("--require-all: one failed host stops the rest and ebb up exits 1 naming it", async () => {
  const up = new Up(["--hosts", "h1,h3", "--require-all"]);
  const code = await up.ended;
  expect(code).toBe(1);
  expect(up.stderr).toContain(`ebb up: --require-all, and a host failed: h3 (ssh: connect to host 127.0.0.4 port ${hosts.port}: Connection refused)\n`);
  await waitFor("no process left on the hosts", () => remoteLeftovers().length === 0);
  expect(existsSync(join(up.state, "controller.lock"))).toBe(false);
}, 400_000);
