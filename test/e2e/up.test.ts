/**
 * `ebb up`: a controller and its agents in one process (the agents on worker threads), run from
 * source and as the compiled binary, which must carry that thread's entrypoint inside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, runProcess } from "../support/cluster.ts";
import { readUntil } from "../support/read-until.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-up-"));
// As ebb starts itself from source (util/self.ts); the compiled binary reads no .env at all.
const fromSource = [process.execPath, "--no-env-file", join(ROOT, "src/main.ts")];
const compiled = [join(ROOT, "dist/ebb")];
const hostCpus = availableParallelism();

beforeAll(async () => {
  const build = Bun.spawn([process.execPath, "run", "build"], { cwd: ROOT, stdout: "ignore", stderr: "pipe" });
  if ((await build.exited) !== 0) throw new Error(`bun run build failed: ${await new Response(build.stderr).text()}`);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ["from source", fromSource],
  ["compiled", compiled],
])("ebb up (%s)", (_, ebb) => {
  test("prints where to reach it, runs jobs on its nodes, and stops on Ctrl-C", async () => {
    const port = await freePort();
    const state = join(dir, `state-${port}`);
    // Started from / so that nothing is found relative to the working directory.
    const up = Bun.spawn([...ebb, "up", "--nodes", "3", "--listen", `127.0.0.1:${port}`, "--state-dir", state], {
      cwd: "/",
      env: { ...process.env, EBB_LOG: "warn" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const banner = await readUntil(up.stdout, "Ctrl-C stops the cluster.");
      expect(banner).toContain("local cluster is up: 3 nodes x 2 cpus");
      expect(banner).toContain(`API:    http://127.0.0.1:${port}/v1`);
      expect(banner).toContain(`token:  ${join(state, "token")}`);
      expect(banner).toMatch(/ebb run -N 2 -l hostname\n.*ebb submit examples\/hello\.sh.*\n.*curl -s -H "Authorization: Bearer/);
      expect(statSync(join(state, "token")).mode & 0o777).toBe(0o600);
      // The dashboard is in the binary: the page, its script and style inline, nothing from elsewhere.
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.headers.get("content-type")).toStartWith("text/html");
      const html = await page.text();
      expect(html).toContain('<form id="login"');
      expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=/);
      const token = readFileSync(join(state, "token"), "utf8").trim();
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);

      // A .env where `ebb run` is started is not ebb's configuration, nor the job's environment.
      const work = join(dir, `work-${port}`);
      mkdirSync(work);
      writeFileSync(join(work, ".env"), "EBB_SURPRISE=from-dotenv\n");
      const run = await runProcess([...ebb, "run", "-N", "3", "-l", "sh", "-c", "echo node=$EBB_NODENAME$EBB_SURPRISE cpus=$(grep Cpus_allowed_list /proc/self/status | cut -f2)"], {
        cwd: work,
        env: { ...process.env, EBB_CONTROLLER: `http://127.0.0.1:${port}`, EBB_STATE_DIR: state, EBB_LOG: "warn" },
      });
      expect({ code: run.code, err: run.stderr }).toEqual({ code: 0, err: "" });
      const lines = run.stdout.trim().split("\n").sort();
      expect(lines.map((l) => l.replace(/ cpus=.*/, ""))).toEqual(["0: node=node01", "1: node=node02", "2: node=node03"]);
      const cpus = lines.map((l) => / cpus=(\S+)$/.exec(l)?.[1]);
      // 3 ranks on nodes that share fewer CPUs: none bound, each may run on any of the host's.
      if (hostCpus < 3) expect(new Set(cpus)).toEqual(new Set([(await Bun.file("/proc/self/status").text()).match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1]]));
      // Else a CPU each: by rank where the nodes share the host's CPUs, their first cores where they do not.
      else expect(new Set(cpus).size).toBe(3);
    } finally {
      up.kill("SIGINT");
    }
    expect(await up.exited).toBe(0);
    expect(await new Response(up.stderr).text()).toContain("ebb up: stopping");
  }, 60_000);
});

test("the compiled binary's --help, piped, has no colour codes", async () => {
  for (const args of [["--help"], ["run", "--help"]]) {
    const r = await runProcess([...compiled, ...args], { env: { ...process.env, NO_COLOR: undefined } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("USAGE");
    expect(r.stdout).not.toContain("\x1b[");
  }
});

test("the compiled binary runs no bunfig.toml of its working directory", async () => {
  const work = join(dir, "bunfig");
  mkdirSync(work);
  writeFileSync(join(work, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
  writeFileSync(join(work, "preload.ts"), 'require("node:fs").writeFileSync("preloaded", "yes");\n');
  const r = await runProcess([...compiled, "--version"], { cwd: work });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  expect(existsSync(join(work, "preloaded"))).toBe(false);
});

test("an agent that cannot start stops `ebb up` with one line naming it", async () => {
  const state = join(dir, "blocked");
  mkdirSync(state, { recursive: true });
  writeFileSync(join(state, "agents"), "a file where the agents' directories would go");
  const up = await runProcess([...fromSource, "up", "--nodes", "2", "--listen", `127.0.0.1:${await freePort()}`, "--state-dir", state], { env: { ...process.env, EBB_LOG: "warn" } });
  expect(up.code).toBe(1);
  expect(up.stderr.trim()).toMatch(/^ebb up: agent node01: ENOTDIR: not a directory/);
}, 30_000);

/** Established TCP connections with an end on `port` (both ends of a loopback connection count), from /proc/net/tcp{,6}. */
function connectionsOn(port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let n = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      if (state === "01" && (local?.endsWith(hex) || remote?.endsWith(hex))) n++;
    }
  }
  return n;
}

test("ebb up's agents reach its controller in-process: no socket to it, and jobs run", async () => {
  const port = await freePort();
  const state = join(dir, `in-process-${port}`);
  const up = Bun.spawn([...fromSource, "up", "--nodes", "6", "--listen", `127.0.0.1:${port}`, "--state-dir", state], { env: { ...process.env, EBB_LOG: "warn" }, stdout: "pipe", stderr: "pipe" });
  try {
    await readUntil(up.stdout, "Ctrl-C stops the cluster.");
    const token = readFileSync(join(state, "token"), "utf8").trim();
    let idle = 0;
    for (let i = 0; i < 200 && idle < 6; i++) {
      if (i > 0) await Bun.sleep(100);
      const nodes = (await (await fetch(`http://127.0.0.1:${port}/v1/nodes`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { nodes: { state: string }[] };
      idle = nodes.nodes.filter((n) => n.state === "IDLE").length;
    }
    expect(idle).toBe(6);
    // Six registered agents, and the only connection to the controller's port was the fetch above (closed by now or kept alive: at most 2 ends).
    expect(connectionsOn(port)).toBeLessThanOrEqual(2);
    const run = await runProcess([...fromSource, "run", "-N", "6", "-l", "sh", "-c", "echo $EBB_NODENAME"], { env: { ...process.env, EBB_CONTROLLER: `http://127.0.0.1:${port}`, EBB_STATE_DIR: state, EBB_LOG: "warn" } });
    expect({ code: run.code, err: run.stderr }).toEqual({ code: 0, err: "" });
    expect(run.stdout.trim().split("\n").sort()).toEqual(["0: node01", "1: node02", "2: node03", "3: node04", "4: node05", "5: node06"]);
  } finally {
    up.kill("SIGINT");
  }
  expect(await up.exited).toBe(0);
}, 60_000);

/** The sentinels guarding `agentsDir` (one per agent thread), from /proc. */
function sentinelsOf(agentsDir: string): number {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`\0ebb-sentinel\0${agentsDir}\0`)) n++;
    } catch {
      /* gone */
    }
  }
  return n;
}

test("ebb up --agent-threads 3: the agents on three threads, a launch over all of them crossing threads", async () => {
  const port = await freePort();
  const state = join(dir, `threads-${port}`);
  const up = Bun.spawn([...fromSource, "up", "--nodes", "20", "--agent-threads", "3", "--listen", `127.0.0.1:${port}`, "--state-dir", state], { env: { ...process.env, EBB_LOG: "warn" }, stdout: "pipe", stderr: "pipe" });
  try {
    await readUntil(up.stdout, "Ctrl-C stops the cluster.");
    expect(sentinelsOf(join(state, "agents"))).toBe(3);
    // Node 1's children in the launch tree (nodes 9-16) are dealt over the three threads: their launch goes by socket.
    const run = await runProcess([...fromSource, "run", "-N", "20", "-l", "sh", "-c", "echo $EBB_NODENAME"], { env: { ...process.env, EBB_CONTROLLER: `http://127.0.0.1:${port}`, EBB_STATE_DIR: state, EBB_LOG: "warn" } });
    expect({ code: run.code, err: run.stderr }).toEqual({ code: 0, err: "" });
    expect(run.stdout.trim().split("\n").sort((a, b) => parseInt(a) - parseInt(b))).toEqual(Array.from({ length: 20 }, (_, i) => `${i}: node${String(i + 1).padStart(2, "0")}`));
  } finally {
    up.kill("SIGINT");
  }
  expect(await up.exited).toBe(0);
}, 60_000);

test("ebb up --agent-threads takes 1 to 64, and only for local agents", async () => {
  const zero = await runProcess([...fromSource, "up", "--agent-threads", "0", "--state-dir", join(dir, "threads-0")], { env: { ...process.env, EBB_LOG: "warn" } });
  expect({ code: zero.code, err: zero.stderr.trim() }).toEqual({ code: 2, err: expect.stringContaining("--agent-threads 0: must be at least 1") });
  const hosts = await runProcess([...fromSource, "up", "--hosts", "a,b", "--agent-threads", "2", "--state-dir", join(dir, "threads-hosts")], { env: { ...process.env, EBB_LOG: "warn" } });
  expect({ code: hosts.code, err: hosts.stderr.trim() }).toEqual({ code: 2, err: expect.stringContaining("--agent-threads is for local agents") });
}, 30_000);
