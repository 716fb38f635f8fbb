/**
 * Test clusters of real processes on loopback: one controller and N agents, each its own OS
 * process running `bun src/main.ts`, in a fresh state directory. Helpers talk to it through the
 * HTTP API and the `ebb` CLI, exactly as users do.
 */
import { afterAll, beforeAll, beforeEach } from "bun:test";
import type { Subprocess } from "bun";
import { mkdirSync, mkdtempSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const MAIN = join(ROOT, "src/main.ts");
const BUN = process.execPath;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The exit code and whole output of a process started with stdout and stderr piped. */
export async function outputOf(proc: Subprocess<Bun.SpawnOptions.Writable, "pipe", "pipe">): Promise<RunResult> {
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Runs a command to its end (the environment defaults to this process's; standard input, to none). */
export function runProcess(argv: string[], opts: { cwd?: string; env?: Record<string, string | undefined>; stdin?: Uint8Array } = {}): Promise<RunResult> {
  return outputOf(Bun.spawn(argv, { cwd: opts.cwd, env: opts.env, stdin: opts.stdin ?? "ignore", stdout: "pipe", stderr: "pipe" }));
}

export interface ClusterOptions {
  agents: number;
  /** Heartbeat interval in seconds (a node goes DOWN after 3 missed). */
  heartbeat?: number;
  cpus?: number;
  killWait?: number;
  /** More `ebb controller` flags (scheduler settings). */
  controllerArgs?: string[];
  /** Environment overrides for the agents (e.g. a PATH without mpicc). */
  agentEnv?: Record<string, string>;
}

/** A TCP port on loopback that nothing listens on right now. */
export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    await Bun.sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ""}`);
}

/** Every process's command line (but this test's own), NULs as spaces, with its parent's pid. */
export function commandLines(): { pid: number; ppid: number; cmd: string }[] {
  const out: { pid: number; ppid: number; cmd: string }[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (cmd) out.push({ pid: Number(e), ppid, cmd });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** The pids of the ranks running `program` on `node` (their environment names it), of the controller at `controller` if given. */
export function rankPids(program: string, node: string, controller?: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, "utf8").includes(program)) continue;
      const env = readFileSync(`/proc/${d}/environ`, "utf8").split("\0");
      if (env.includes(`EBB_NODENAME=${node}`) && (controller === undefined || env.includes(`EBB_CONTROLLER=${controller}`))) out.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

export class TestCluster {
  readonly dir: string;
  readonly stateDir: string;
  port = 0;
  url = "";
  token = "";
  controller!: Subprocess;
  readonly agents = new Map<string, Subprocess>();
  private readonly logs: string[] = [];

  constructor(readonly opts: ClusterOptions) {
    this.dir = mkdtempSync(join(tmpdir(), "ebb-test-"));
    this.stateDir = join(this.dir, "state");
  }

  /** Environment for CLI calls and job processes started by tests. */
  get env(): Record<string, string> {
    return { ...(process.env as Record<string, string>), EBB_STATE_DIR: this.stateDir, EBB_CONTROLLER: this.url, EBB_LOG: "warn" };
  }

  private spawn(args: string[], logName: string, env: Record<string, string> = {}): Subprocess {
    const proc = Bun.spawn([BUN, MAIN, ...args], {
      cwd: this.dir,
      env: { ...this.env, EBB_LOG: "info", ...env },
      stdout: Bun.file(join(this.dir, `${logName}.log`)),
      stderr: Bun.file(join(this.dir, `${logName}.err`)),
    });
    this.logs.push(logName);
    return proc;
  }

  async startController(): Promise<void> {
    if (!this.port) this.port = await freePort();
    rmSync(join(this.stateDir, "controller.url"), { force: true });
    this.controller = this.spawn(
      ["controller", "--listen", `127.0.0.1:${this.port}`, "--state-dir", this.stateDir, "--heartbeat", String(this.opts.heartbeat ?? 1), "--kill-wait", String(this.opts.killWait ?? 2), ...(this.opts.controllerArgs ?? [])],
      `controller-${Date.now()}`,
    );
    this.url = `http://127.0.0.1:${this.port}`;
    await waitFor("the controller to listen", async () => (await fetch(`${this.url}/v1/health`)).ok);
    this.token = readFileSync(join(this.stateDir, "token"), "utf8").trim();
  }

  /** An agent as its own process; `flags` come after (and so override) the defaults. */
  startAgent(name: string, flags: string[] = []): Subprocess {
    const stateDir = join(this.dir, "agents", name);
    shareCfgCache(stateDir);
    const agent = this.spawn(
      ["agent", "--controller", this.url, "--name", name, "--cpus", String(this.opts.cpus ?? 2), "--key-file", join(this.stateDir, "cluster.key"), "--state-dir", stateDir, ...flags],
      `agent-${name}-${Date.now()}`,
      this.opts.agentEnv,
    );
    this.agents.set(name, agent);
    return agent;
  }

  async start(): Promise<this> {
    await this.startController();
    for (let i = 1; i <= this.opts.agents; i++) this.startAgent(`node${String(i).padStart(2, "0")}`);
    // Two shared cores start agents slowly: the wait grows with their number.
    await this.waitNodes(this.opts.agents, "IDLE", Math.max(90_000, this.opts.agents * 6_000));
    return this;
  }

  async waitNodes(count: number, state: string, timeoutMs?: number): Promise<void> {
    await waitFor(`${count} nodes ${state}`, async () => {
      const { json } = await this.api("GET", "/v1/nodes");
      return (json as { nodes: { state: string }[] }).nodes.filter((n) => n.state === state).length >= count;
    }, timeoutMs);
  }

  async api(method: string, path: string, body?: unknown, token: string | null = this.token): Promise<{ status: number; json: any }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  }

  /** Submits a job (with the cluster's token, or `token`) and returns its id; anything but 201 throws. */
  async submit(body: Record<string, unknown>, token = this.token): Promise<number> {
    const r = await this.api("POST", "/v1/jobs", { cwd: this.dir, ...body }, token);
    if (r.status !== 201) throw new Error(`submit failed: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json.id as number;
  }

  async job(id: number): Promise<any> {
    return (await this.api("GET", `/v1/jobs/${id}`)).json;
  }

  async waitJob(id: number, states: string[], timeoutMs = 30_000): Promise<any> {
    return waitFor(`job ${id} to reach ${states.join("/")}`, async () => {
      const j = await this.job(id);
      return states.includes(j.state) ? j : undefined;
    }, timeoutMs);
  }

  /** The adaptation once it has ended (COMMITTED or FAILED). */
  async adaptationEnd(jobId: number, adaptationId: number): Promise<any> {
    return waitFor(`adaptation ${adaptationId} of job ${jobId} to end`, async () => {
      const a = (await this.job(jobId)).adaptations.find((x: any) => x.id === adaptationId);
      return a && a.state !== "ADAPTING" ? a : undefined;
    });
  }

  /** Resize a running elastic job through the API and wait for the adaptation to end. */
  async resize(jobId: number, nodes: number): Promise<any> {
    const r = await this.api("POST", `/v1/jobs/${jobId}/resize`, { nodes });
    if (r.status !== 202) throw new Error(`resize of job ${jobId} to ${nodes} nodes: ${r.status} ${JSON.stringify(r.json)}`);
    return this.adaptationEnd(jobId, r.json.adaptationId);
  }

  /** Run the ebb CLI as its own process. */
  ebb(args: string[], opts: { env?: Record<string, string>; cwd?: string; stdin?: Uint8Array } = {}): Promise<RunResult> {
    return runProcess([BUN, MAIN, ...args], { cwd: opts.cwd ?? this.dir, env: { ...this.env, ...opts.env }, stdin: opts.stdin });
  }

  /** Start the ebb CLI without waiting (for Ctrl-C tests). */
  ebbSpawn<In extends "ignore" | "pipe" = "ignore">(args: string[], opts: { cwd?: string; stdin?: In } = {}): Subprocess<In, "pipe", "pipe"> {
    return Bun.spawn([BUN, MAIN, ...args], { cwd: opts.cwd ?? this.dir, env: this.env, stdin: (opts.stdin ?? "ignore") as In, stdout: "pipe", stderr: "pipe" });
  }

  read(file: string): string {
    const p = file.startsWith("/") ? file : join(this.dir, file);
    return existsSync(p) ? readFileSync(p, "utf8") : "";
  }

  /** Everything the daemons logged, for failure messages. */
  daemonLogs(): string {
    return this.logs.map((l) => `--- ${l}\n${this.read(`${l}.err`)}`).join("\n");
  }

  async stop(): Promise<void> {
    for (const a of this.agents.values()) a.kill("SIGTERM");
    this.controller?.kill("SIGTERM");
    await Promise.all([...this.agents.values()].map((a) => a.exited));
    await this.controller?.exited;
    if (!process.env.EBB_KEEP_TEST_DIRS) rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * An agent builds the CFG library (roles/agent/cfg-lib.ts) with mpicc at its node's first MPI step
 * and caches it in STATE_DIR/cfg, by a hash of the source and of mpicc: the test agents' cfg is
 * one directory for every cluster of this user, so the library is built once per run (not once per
 * agent of every cluster, each build one more mpicc at a step's start on two shared cores).
 */
function shareCfgCache(stateDir: string): void {
  const shared = join(tmpdir(), `ebb-cfg-cache-${process.getuid?.() ?? "user"}`);
  mkdirSync(shared, { recursive: true });
  mkdirSync(stateDir, { recursive: true });
  if (!existsSync(join(stateDir, "cfg"))) symlinkSync(shared, join(stateDir, "cfg"));
}

export async function startCluster(opts: ClusterOptions): Promise<TestCluster> {
  const c = new TestCluster(opts);
  try {
    return await c.start();
  } catch (e) {
    // A cluster that did not come up is stopped: its processes would outlive the test otherwise.
    await c.stop().catch(() => {});
    throw e;
  }
}

/**
 * One cluster for the tests of a file: started before them, stopped after them, and every node
 * idle before each (a cancelled job's nodes stay COMPLETING for a moment). What it returns stands
 * for the cluster once started (it forwards to it), so tests use it as they would the cluster.
 */
export function clusterForFile(opts: ClusterOptions): TestCluster {
  let c: TestCluster | undefined;
  beforeAll(async () => {
    c = await startCluster(opts);
  });
  afterAll(async () => {
    await c?.stop();
  });
  beforeEach(async () => {
    await c!.waitNodes(opts.agents, "IDLE");
  });
  return new Proxy({} as TestCluster, {
    get(_, key) {
      if (!c) throw new Error("the file's cluster is not started yet: use it inside a test or hook");
      const v = Reflect.get(c, key, c);
      return typeof v === "function" ? v.bind(c) : v;
    },
  });
}
