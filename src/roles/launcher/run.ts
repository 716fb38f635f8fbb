/**
 * `ebb run`: outside a job, ask for an allocation and wait for it; inside one, use it. Then run
 * the step through the agents, forward its output, and give back the allocation it made.
 */
import { basename } from "node:path";
import { ApiClient, ApiClientError } from "../../api/client.ts";
import { Channel } from "../../proto/channel.ts";
import { ControllerToLauncher, type LauncherToController } from "../../proto/launcher.ts";
import type { PmiMode } from "../../proto/step.ts";
import { PeerPool } from "../../tbon/pool.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import { terminalSink } from "./output.ts";
import { StepRoot } from "./step-root.ts";

export interface RunOptions {
  client: ApiClient;
  argv: string[];
  nodes?: number;
  tasks?: number;
  tasksPerNode?: number;
  timeLimit?: number;
  name?: string;
  label: boolean;
  cwd: string;
  env: Record<string, string>;
  /** Set inside a job (EBB_JOB_ID): run a step of that job instead of asking for an allocation. */
  jobId?: number;
  fanout: number;
  pmi: PmiMode;
  /** Progress and errors for the user. */
  say(text: string, opts?: { transient?: boolean }): void;
}

type JobState = Extract<ControllerToLauncher, { t: "job.state" }>;

const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "GONE"]);

export async function run(o: RunOptions): Promise<number> {
  const owned = o.jobId === undefined;
  const jobId =
    o.jobId ??
    (
      await o.client.submit({
        interactive: true,
        name: o.name ?? basename(o.argv[0]!),
        nodes: o.nodes,
        tasks: o.tasks,
        tasksPerNode: o.tasksPerNode,
        timeLimit: o.timeLimit,
        cwd: o.cwd,
        env: o.env,
      })
    ).id;

  let latest: JobState | undefined;
  let notify: (() => void) | undefined;
  let onState: ((s: JobState) => void) | undefined;
  const channel = new Channel<LauncherToController, ControllerToLauncher>({
    url: o.client.wsUrl("/v1/launcher"),
    token: o.client.token,
    schema: ControllerToLauncher,
    reconnect: { maxDelayMs: 1000 },
    onOpen: () => channel.send({ t: "attach", jobId }),
    onMessage: (m) => {
      if (m.t === "error") return o.say(`controller: ${m.message}`);
      if (m.jobId !== jobId) return;
      latest = m;
      onState?.(m);
      notify?.();
    },
  });
  const next = () => new Promise<void>((r) => (notify = r));

  const cancelOwned = async () => {
    if (owned) await o.client.cancel(jobId).catch(() => {});
  };
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    notify?.();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  try {
    // 1. Wait for the allocation.
    const waitStart = Date.now();
    let announced = false;
    const progress = setInterval(() => {
      if (latest?.state !== "PENDING" && latest !== undefined) return;
      const secs = Math.round((Date.now() - waitStart) / 1000);
      o.say(`job ${jobId} queued and waiting for resources (${secs} s${latest?.reason ? `; ${latest.reason}` : ""})`, { transient: true });
      announced = true;
    }, 1000);
    while (!interrupted && (latest === undefined || latest.state === "PENDING")) await next();
    clearInterval(progress);
    if (interrupted) {
      await cancelOwned();
      o.say(`job ${jobId} cancelled while waiting`);
      return 130;
    }
    if (latest!.state !== "RUNNING" && latest!.state !== "ADAPTING") {
      o.say(`job ${jobId} ${latest!.state.toLowerCase()}${latest!.reason ? `: ${latest!.reason}` : ""}`);
      return 1;
    }
    if (announced) o.say(`job ${jobId} has been allocated ${compressHostlist(latest!.nodes)}`);

    // 2. Run the step.
    const grant = await o.client.createStep(jobId, { argv: o.argv, nodes: o.nodes, tasks: o.tasks, tasksPerNode: o.tasksPerNode });
    const sink = terminalSink({ label: o.label, prog: "ebb" });
    const pool = new PeerPool();
    const root = new StepRoot({
      spec: {
        jobId,
        stepId: grant.stepId,
        argv: o.argv,
        env: o.env,
        cwd: o.cwd,
        nodes: grant.nodes,
        tasks: grant.tasks,
        jobNodes: grant.jobNodes,
        fanout: o.fanout,
        pmi: o.pmi,
        jobEnv: grant.jobEnv,
      },
      cred: grant.cred,
      connect: (addr) => pool.get(addr),
      sink,
    });
    onState = (s) => {
      if (TERMINAL.has(s.state)) root.cancel(`job ${jobId} ${s.state.toLowerCase()}${s.reason ? `: ${s.reason}` : ""}`, 143);
    };
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    const stop = () => root.cancel("interrupted; killing all ranks", 130);
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    const result = await root.start();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    sink.flush();
    pool.close();

    // 3. Report and give back.
    channel.send({ t: "step.end", jobId, stepId: grant.stepId, exitCode: result.exitCode, message: result.failure });
    if (owned && latest && !TERMINAL.has(latest.state)) {
      channel.send({ t: "release", jobId, exitCode: result.exitCode, message: result.failure, lostNode: result.lostNode });
      const deadline = Date.now() + 3000;
      while (latest && !TERMINAL.has(latest.state) && Date.now() < deadline) await Promise.race([next(), Bun.sleep(200)]);
    } else {
      await Bun.sleep(20);
    }
    return result.exitCode;
  } catch (e) {
    await cancelOwned();
    if (e instanceof ApiClientError) {
      o.say(e.message);
      return 1;
    }
    throw e;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    channel.close();
  }
}
