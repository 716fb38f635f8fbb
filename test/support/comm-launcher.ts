/**
 * Test-only launcher for ebb/comm programs: spawns N separate `bun` processes with a KVS server
 * (comm-kvs.ts) for wire-up, collects what each reports, and kills everything after a deadline
 * so a hang fails the test instead of stalling it.
 *
 * Programs report with `report(x)` from comm-report.ts (one "@<json>" line on stdout); anything
 * else is kept as text.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { KvsServer } from "./comm-kvs.ts";

export interface LaunchOptions {
  program: string;
  /** Ranks in the initial world. */
  n: number;
  /** Ranks are spread over this many node names (rank % nodes); different nodes talk TCP. */
  nodes?: number;
  args?: string[];
  /** Hard deadline for the whole job; anything still running then is SIGKILLed and marked. */
  deadlineMs?: number;
  /** Extra environment for every process. */
  env?: Record<string, string>;
}

export interface ProcResult {
  name: string;
  code: number | null;
  signal: string | null;
  killedAtDeadline: boolean;
  reports: Record<string, unknown>[];
  stdout: string;
  stderr: string;
}

interface Proc {
  name: string;
  sub: Subprocess<"ignore", "pipe", "pipe">;
  reports: Record<string, unknown>[];
  text: string[];
  stderr: Promise<string>;
  stdoutDone: Promise<void>;
  listeners: (() => void)[];
  killedAtDeadline: boolean;
}

export class Job {
  readonly dir: string;
  readonly kvs: KvsServer;
  private readonly procs: Proc[] = [];
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(private readonly opts: LaunchOptions) {
    this.dir = mkdtempSync(join(tmpdir(), "ebbct-"));
    this.kvs = new KvsServer(join(this.dir, "kvs.sock"));
    for (let r = 0; r < opts.n; r++) this.spawn(`rank${r}`, { EBB_TEST_RANK: String(r), EBB_TEST_NODE: `node${r % (opts.nodes ?? 1)}` });
    this.timer = setTimeout(() => {
      for (const p of this.procs) {
        if (p.sub.exitCode === null && p.sub.signalCode === null) {
          p.killedAtDeadline = true;
          p.sub.kill("SIGKILL");
        }
      }
    }, opts.deadlineMs ?? 30_000);
  }

  /** Starts one more process of the program (a joining rank, say) with extra environment. */
  spawn(name: string, env: Record<string, string>): void {
    const sub = Bun.spawn([process.execPath, this.opts.program, ...(this.opts.args ?? [])], {
      env: {
        ...process.env,
        EBB_TEST_KVS: this.kvs.path,
        EBB_TEST_SIZE: String(this.opts.n),
        EBB_COMM_DIR: this.dir,
        ...this.opts.env,
        ...env,
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const p: Proc = {
      name,
      sub,
      reports: [],
      text: [],
      stderr: new Response(sub.stderr).text(),
      stdoutDone: Promise.resolve(),
      listeners: [],
      killedAtDeadline: false,
    };
    p.stdoutDone = (async () => {
      let buf = "";
      const dec = new TextDecoder();
      for await (const chunk of sub.stdout) {
        buf += dec.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.startsWith("@")) p.reports.push(JSON.parse(line.slice(1)) as Record<string, unknown>);
          else p.text.push(line);
          for (const l of p.listeners.splice(0)) l();
        }
      }
      for (const l of p.listeners.splice(0)) l();
    })();
    this.procs.push(p);
  }

  private proc(name: string): Proc {
    const p = this.procs.find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name}`);
    return p;
  }

  /** Resolves with the first report of `name` that satisfies `pred`; rejects if it exits first. */
  async waitFor(name: string, pred: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const p = this.proc(name);
    for (;;) {
      const hit = p.reports.find(pred);
      if (hit) return hit;
      if (p.sub.exitCode !== null || p.sub.signalCode !== null) {
        await p.stdoutDone;
        const late = p.reports.find(pred);
        if (late) return late;
        throw new Error(`${name} exited before reporting what was awaited: ${await p.stderr}`);
      }
      await new Promise<void>((resolve) => {
        p.listeners.push(resolve);
        p.sub.exited.then(() => resolve());
      });
    }
  }

  kill(name: string, signal: NodeJS.Signals = "SIGKILL"): void {
    this.proc(name).sub.kill(signal);
  }

  /** Kills everything and cleans up; for a test that gives up half-way. */
  async abort(): Promise<void> {
    for (const p of this.procs) p.sub.kill("SIGKILL");
    await this.finished();
  }

  /** Waits for every process, then cleans up. */
  async finished(): Promise<ProcResult[]> {
    const out: ProcResult[] = [];
    for (const p of this.procs) {
      await p.sub.exited;
      await p.stdoutDone;
      out.push({
        name: p.name,
        code: p.sub.exitCode,
        signal: p.sub.signalCode === null ? null : String(p.sub.signalCode),
        killedAtDeadline: p.killedAtDeadline,
        reports: p.reports,
        stdout: p.text.join("\n"),
        stderr: await p.stderr,
      });
    }
    clearTimeout(this.timer);
    this.kvs.stop();
    rmSync(this.dir, { recursive: true, force: true });
    return out;
  }
}

/** Runs a job to completion. */
export function launch(opts: LaunchOptions): Promise<ProcResult[]> {
  return new Job(opts).finished();
}

/** Fails with every process's stderr if any process did not exit 0 on its own. */
export function expectClean(results: ProcResult[]): void {
  const bad = results.filter((r) => r.code !== 0 || r.killedAtDeadline);
  if (bad.length > 0) {
    throw new Error(
      bad
        .map((r) => `${r.name}: code=${r.code} signal=${r.signal}${r.killedAtDeadline ? " (killed at deadline: hang)" : ""}\n${r.stderr}${r.stdout}`)
        .join("\n---\n"),
    );
  }
}
