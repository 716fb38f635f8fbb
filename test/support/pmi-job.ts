import { type ChildProcess, spawn } from "node:child_process";
import type { Duplex } from "node:stream";
import type { PmiBackend, PmiRankInfo, SpawnRequest, SpawnResult } from "../../src/pmi/backend.ts";
import type { PmiConnection, PmiMode } from "../../src/pmi/connection.ts";
import { processMapping } from "../../src/pmi/mapping.ts";
import { NodeStepPmi } from "../../src/pmi/node-step.ts";
import { attachPmiSocket, listenPmiPort } from "../../src/pmi/socket.ts";

/**
 * A whole job on one node, without the agent: one NodeStepPmi whose "tree exchange" is the identity
 * (this node is every node), a job-wide name service, PMI_process_mapping for one node.
 */
export class SingleNodeJob {
  readonly step: NodeStepPmi;
  readonly protocolErrors: string[] = [];
  readonly aborts: Array<{ rank: number; code: number; message: string }> = [];
  readonly finalized = new Set<number>();
  readonly exchanges: Array<Record<string, string>> = [];
  /** Why the step failed (abort or protocol error), like the agent's step failure message. */
  failure: string | undefined;
  private readonly failureListeners: Array<(why: string) => void> = [];

  constructor(
    readonly size: number,
    opts: {
      jobId?: string;
      preput?: Record<string, string>;
      spawned?: boolean;
      names?: Map<string, string>;
      spawn?: (rank: number, req: SpawnRequest) => Promise<SpawnResult>;
      extension?: (rank: number, cmd: string, args: Record<string, string>) => Promise<Record<string, string>> | undefined;
    } = {},
  ) {
    const jobId = opts.jobId ?? "ebb-7.0";
    const names = opts.names ?? new Map<string, string>();
    const infos: PmiRankInfo[] = Array.from({ length: size }, (_, rank) => ({
      rank,
      size,
      appnum: 0,
      kvsname: `kvs_${jobId}`,
      jobId,
      universeSize: size,
      spawned: opts.spawned ?? false,
      debug: false,
    }));
    const mapping = processMapping([size]);
    this.step = new NodeStepPmi(
      infos,
      {
        exchange: async (puts) => {
          this.exchanges.push(puts);
          return puts;
        },
        jobAttr: (key) => (key === "PMI_process_mapping" ? mapping : undefined),
        publish: async (service, port) => !names.has(service) && (names.set(service, port), true),
        lookup: async (service) => names.get(service),
        unpublish: async (service) => names.delete(service),
        spawn: opts.spawn,
        abort: (rank, code, message) => {
          this.aborts.push({ rank, code, message });
          this.fail(`rank ${rank} aborted the job with exit code ${code}`);
        },
        finalize: (rank) => void this.finalized.add(rank),
        protocolError: (_rank, message) => {
          this.protocolErrors.push(message);
          this.fail(message);
        },
        extension: opts.extension,
      },
      opts.preput,
    );
  }

  backend(rank: number): PmiBackend {
    return this.step.backend(rank);
  }

  /** What the agent does when a step fails: fail pending fences, tell whoever kills the processes. */
  fail(why: string): void {
    if (this.failure !== undefined) return;
    this.failure = why;
    this.step.fail(why);
    for (const l of this.failureListeners) l(why);
  }

  onFailure(listener: (why: string) => void): void {
    this.failureListeners.push(listener);
  }
}

/** Per-test timeout for tests that start processes: generous, only there to turn a hang into a failure. */
export const HANG_GUARD = 30_000;

export interface RankOutcome {
  rank: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** PMI version the rank negotiated (PMI_FD mode). */
  version: 1 | 2 | undefined;
}

export interface LaunchOptions {
  args?: string[];
  env?: Record<string, string>;
  /** `fd`: socketpair as fd 3 (PMI_FD=3, PMI_RANK, PMI_SIZE); `port`: PMI_PORT + PMI_ID over TCP. */
  via?: "fd" | "port";
  mode?: PmiMode;
  /** Kill everything after this long so a hang shows up as output, not as a stuck test run. */
  killAfterMs?: number;
}

/** Start `job.size` ranks of `binary`, each wired to its PmiConnection; `done` settles when all have exited. */
export async function startRanks(
  binary: string,
  job: SingleNodeJob,
  opts: LaunchOptions = {},
): Promise<{ done: Promise<RankOutcome[]> }> {
  const via = opts.via ?? "fd";
  const port =
    via === "port"
      ? await listenPmiPort({ byId: (id) => (id >= 0 && id < job.size ? job.backend(id) : undefined), mode: opts.mode })
      : undefined;
  const children: ChildProcess[] = [];
  const runs = Array.from({ length: job.size }, (_, rank) => {
    const pmiEnv: Record<string, string> =
      via === "fd"
        ? { PMI_FD: "3", PMI_RANK: String(rank), PMI_SIZE: String(job.size) }
        : { PMI_PORT: `${port?.host}:${port?.port}`, PMI_ID: String(rank) };
    const child = spawn(binary, opts.args ?? [], {
      stdio: ["ignore", "pipe", "pipe", via === "fd" ? "pipe" : "ignore"],
      env: { ...process.env, ...pmiEnv, ...opts.env },
    });
    children.push(child);
    let conn: PmiConnection | undefined;
    if (via === "fd") conn = attachPmiSocket(child.stdio[3] as Duplex, { backend: job.backend(rank), mode: opts.mode });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    return new Promise<RankOutcome>((resolve) => {
      child.on("close", (code, signal) => resolve({ rank, code, signal, stdout, stderr, version: conn?.version }));
    });
  });
  const killAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  };
  job.onFailure(killAll);
  const guard = setTimeout(killAll, opts.killAfterMs ?? 30_000);
  const done = Promise.all(runs).finally(async () => {
    clearTimeout(guard);
    await port?.close();
  });
  return { done };
}

/** Start the ranks and wait for all of them to exit. */
export async function launchRanks(binary: string, job: SingleNodeJob, opts: LaunchOptions = {}): Promise<RankOutcome[]> {
  return (await startRanks(binary, job, opts)).done;
}
