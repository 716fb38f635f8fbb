/**
 * `ebb run`: outside a job, ask for an allocation and wait for it; inside one, use it. Then run
 * the step (and whatever it spawns) through the agents, forward its output, report its end and
 * give back the allocation it made.
 */
import { envDigest } from "../../proto/credential.ts";
import { basename } from "node:path";
import { ApiClient, ApiClientError } from "../../api/client.ts";
import type { JobResources } from "../../api/schemas.ts";
import type { PmiMode, StepSpec } from "../../proto/step.ts";
import { nodeOfRanks } from "../../sched/layout.ts";
import { PeerPool } from "../../tbon/pool.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import { ControllerLink } from "./controller-link.ts";
import { isFinal } from "../../domain/job.ts";
import { mark } from "../../util/trace.ts";
import { Launch } from "./launch.ts";
import { rankFileSink, terminalSink } from "./output.ts";
import { arrayTaskVar, expandPattern, perRankPattern } from "../output-patterns.ts";
import { currentUser } from "../../util/user.ts";
import { err, stdinIsEmpty } from "../../util/stdio.ts";
import type { StepGrant } from "../../proto/requests.ts";

/** How long a job's OUT_OF_MEMORY waits for the exit of the rank the kernel killed before the step is cut. */
const OOM_EXIT_WAIT_MS = 5_000;

export interface RunOptions {
  client: ApiClient;
  argv: string[];
  nodes?: number;
  elastic?: boolean;
  minNodes?: number;
  maxNodes?: number;
  /** The node counts the job can run at (`--sizes`). */
  sizes?: "square" | number[];
  sampleInterval?: number;
  tasks?: number;
  tasksPerNode?: number;
  /** Each rank is shown one GPU of its node's, this many ranks to a GPU (--ntasks-per-gpu). */
  tasksPerGpu?: number;
  /** How the step's ranks are numbered over its nodes (-m cyclic, plane=N); absent: block. */
  distribution?: StepSpec["distribution"];
  /** Cores, memory, GPUs, features, whole nodes: of the allocation it asks for (not of a step inside a job). */
  resources?: JobResources;
  /** More ranks than the nodes have CPUs. */
  overcommit?: boolean;
  timeLimit?: number | "UNLIMITED";
  exclude?: string[];
  nodelist?: string[];
  /** The partition the allocation is made in (default: the controller's default). */
  partition?: string;
  name?: string;
  label: boolean;
  cwd: string;
  env: Record<string, string>;
  /** Set inside a job (EBB_JOB_ID): run a step of that job instead of asking for an allocation. */
  jobId?: number;
  fanout: number;
  pmi: PmiMode;
  pmiPort: boolean;
  /** CFG monitoring of the step's ranks (default on). */
  cfg?: "on" | "off";
  /** How ranks are bound to their job's cores (`--cpu-bind`; default cores). */
  cpuBind?: "none" | "cores";
  /** Seconds a PMI spawn may wait for idle nodes. */
  spawnWait: number;
  /**
   * Seconds the step may run before every rank is killed, and what ebb run then says and exits
   * with: 255 for MPIEXEC_TIMEOUT (as Hydra), 143 for a step's own time limit (srun -t).
   */
  stepTimeout?: { seconds: number; why: string; code: number };
  /**
   * The step's output in a file instead of on this terminal (and its errors in another), patterns
   * expanded once the step has its id: %j job, %s step, %J job.step, %x job name, %u user, %A and
   * %a array job and task, %% a %. Truncated first, unless `append`.
   */
  output?: { path: string; error?: string; append?: boolean };
  /** A failed rank leaves the others running; the exit code is the highest (srun's default). */
  keepGoing?: boolean;
  /** Speak as Slurm's srun: ranks' ends in its words, on this process's standard error even with `output` (StepRootOptions.srun). */
  srun?: boolean;
  /** Each rank's output as it comes, not a whole line at a time. */
  unbuffered?: boolean;
  /** The ranks that read this process's standard input (`--input`): every one, or this step rank; absent: none. */
  stdin?: "all" | number;
  /**
   * Inside a job: the step holds tasks x cpusPerTask of the job's CPUs while it runs, and waits
   * for them when the job's other exact steps hold them (srun --exact).
   */
  exact?: boolean;
  /** CPUs each task of an exact step holds (default: the job's). */
  cpusPerTask?: number;
  /** An exact step waits for CPUs (said once), and got them after waiting. */
  stepWaits?: { waiting(jobId: number, message: string): void; granted(jobId: number, stepId: number): void };
  /** Progress and errors for the user. */
  say(text: string, opts?: { transient?: boolean }): void;
}

/** Resolves on SIGINT/SIGTERM until disposed. */
function interrupts(): { next: Promise<string>; dispose(): void } {
  let fire!: (s: string) => void;
  const next = new Promise<string>((r) => (fire = r));
  const onInt = () => fire("SIGINT");
  const onTerm = () => fire("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return { next, dispose: () => (process.off("SIGINT", onInt), process.off("SIGTERM", onTerm)) };
}

export async function run(o: RunOptions): Promise<number> {
  const owned = o.jobId === undefined;
  const say = (m: string) => o.say(m);
  // Before submitting: a Ctrl-C from now on cancels the job, even one the controller is still making.
  const signals = interrupts();
  mark("l.start");
  const link =
    o.jobId !== undefined
      ? new ControllerLink(o.client, o.jobId, say)
      : await ControllerLink.submit(
          o.client,
          {
            interactive: true,
            name: o.name ?? basename(o.argv[0]!),
            nodes: o.nodes,
            elastic: o.elastic,
            minNodes: o.minNodes,
            maxNodes: o.maxNodes,
            sizes: o.sizes,
            sampleInterval: o.sampleInterval,
            tasks: o.tasks,
            tasksPerNode: o.tasksPerNode,
            ...o.resources,
            overcommit: o.overcommit,
            timeLimit: o.timeLimit,
            exclude: o.exclude,
            nodelist: o.nodelist,
            partition: o.partition,
            cwd: o.cwd,
            env: o.env,
          },
          say,
        ).catch((e: unknown) => {
          signals.dispose();
          throw e;
        });
  const jobId = link.jobId;
  const cancelOwned = async () => {
    if (owned) await o.client.cancel(jobId).catch(() => {});
  };
  try {
    // 1. Wait for the allocation, with a progress line.
    const waitStart = Date.now();
    let announced = false;
    const progress = setInterval(() => {
      if (link.latest !== undefined && link.latest.state !== "PENDING") return;
      // Inside a job, only a job known to be pending waits (on a loaded host its state may take seconds to come).
      if (!owned && link.latest === undefined) return;
      const reason = link.latest?.reason;
      o.say(`job ${jobId} queued and waiting for resources (${Math.round((Date.now() - waitStart) / 1000)} s${reason ? `; ${reason}` : ""})`, { transient: true });
      announced = true;
    }, 1000);
    let interrupted = false;
    void signals.next.then(() => (interrupted = true));
    while (!interrupted && (link.latest === undefined || link.latest.state === "PENDING")) await Promise.race([link.nextState(), signals.next]);
    clearInterval(progress);
    if (interrupted) {
      await cancelOwned();
      o.say(`job ${jobId} cancelled while waiting`);
      return 130;
    }
    const state = link.latest!;
    if (state.state !== "RUNNING" && state.state !== "ADAPTING") {
      o.say(`job ${jobId} ${state.state.toLowerCase()}${state.reason ? `: ${state.reason}` : ""}`);
      return 1;
    }
    if (announced) o.say(`job ${jobId} has been allocated ${compressHostlist(state.nodes)}`);

    // 2. Run the step and what it spawns.
    mark("l.allocated");
    // Inside a job, -w names the job's nodes the step runs on; outside, the allocation asked for them.
    const nodelist = owned ? undefined : o.nodelist;
    let waited = false;
    const created = link.createStep(
      {
        argv: o.argv,
        // -J names the step too, as srun's (sacct's JobName of its line).
        ...(o.name !== undefined ? { name: o.name } : {}),
        nodes: o.nodes,
        tasks: o.tasks,
        tasksPerNode: o.tasksPerNode,
        overcommit: o.overcommit,
        nodelist,
        cwd: o.cwd,
        envDigest: envDigest(o.env),
        ...(o.distribution?.kind === "plane" ? { plane: o.distribution.size } : {}),
        ...(o.exact ? { exact: true, ...(o.cpusPerTask !== undefined ? { cpusPerTask: o.cpusPerTask } : {}) } : {}),
      },
      (message) => {
        if (!waited) o.stepWaits?.waiting(jobId, message);
        waited = true;
      },
    );
    // An exact step may wait for CPUs: a signal meanwhile ends the wait (the closed connection takes it off the controller's list).
    const signalled = signals.next.then((signal) => ({ signal }));
    const granted = await Promise.race([created, signalled]);
    void created.catch(() => {});
    if ("signal" in granted) {
      link.close();
      await cancelOwned();
      o.say(`${granted.signal}: the step of job ${jobId} no longer waits for CPUs`);
      return granted.signal === "SIGINT" ? 130 : 143;
    }
    const grant = granted;
    if (waited) o.stepWaits?.granted(jobId, grant.stepId);
    mark("l.granted");
    // An elastic world's resizes keep, add and remove ranks in blocks (adapter.ts): its ranks are numbered so.
    if (grant.elastic && o.distribution) {
      const why = `--distribution=${o.distribution.kind}: an elastic step's ranks are numbered in blocks over its nodes; run it without --distribution`;
      link.stepEnded(grant.stepId, 1, why);
      o.say(why);
      await cancelOwned();
      return 1;
    }
    let file: ReturnType<typeof stepFileSink> | undefined;
    try {
      file = o.output ? stepFileSink(o.output, o, grant, o.cwd) : undefined;
    } catch (e) {
      const why = `cannot open the step's output file: ${(e as Error).message}`;
      link.stepEnded(grant.stepId, 1, why);
      o.say(why);
      await cancelOwned();
      return 1;
    }
    const ranks = grant.tasks.reduce((a, b) => a + b, 0);
    if (typeof o.stdin === "number" && o.stdin >= ranks) {
      const why = `--input ${o.stdin}: the step has ${ranks} rank${ranks === 1 ? "" : "s"} (0 to ${ranks - 1}); name one of them, all, or none`;
      link.stepEnded(grant.stepId, 1, why);
      file?.close();
      o.say(why);
      await cancelOwned();
      return 1;
    }
    const output = file ?? terminalSink({ label: o.label, unbuffered: o.unbuffered, prog: "ebb" });
    // srun says its errors on its own standard error, whatever file the ranks write to.
    const sink = o.srun ? { ...output, notice: (text: string) => err(`srun: error: ${text}\n`) } : output;
    // A TLS cluster's step ports are TLS too, their certificates signed by the same CA.
    const pool = new PeerPool(o.client.ca?.pem);
    const launch = new Launch({
      link,
      grant,
      argv: o.argv,
      env: o.env,
      cwd: o.cwd,
      fanout: o.fanout,
      pmi: o.pmi,
      pmiPort: o.pmiPort,
      cfg: o.cfg,
      cpuBind: o.cpuBind,
      connect: (addr) => pool.get(addr),
      openAhead: (addr) => pool.prepare(addr),
      sink,
      spawnWait: o.spawnWait,
      reportPrimary: true,
      keepGoing: o.keepGoing,
      srun: o.srun,
      // Inside a job, -J names the step (its ranks' SLURM_JOB_NAME); outside, it named the job.
      name: owned ? undefined : o.name,
      distribution: o.distribution,
      tasksPerGpu: o.tasksPerGpu,
      // Nothing to forward from /dev/null: the ranks get their own, and can be warm ones.
      stdin: o.stdin === undefined || stdinIsEmpty() ? undefined : { source: Bun.stdin.stream(), ranks: o.stdin },
    });
    let oomWait: ReturnType<typeof setTimeout> | undefined;
    const offState = link.onState((s) => {
      if (!isFinal(s.state) || oomWait) return;
      const why = `job ${jobId} ${s.state.toLowerCase()}${s.reason ? `: ${s.reason}` : ""}`;
      // OUT_OF_MEMORY is the end of a rank the kernel killed, whose exit is on its way from its
      // node by another path than this news: that exit says how the step ended (137, in the
      // rank's words), as it does when it comes first. Only if it does not come is the step cut.
      if (s.state === "OUT_OF_MEMORY") oomWait = setTimeout(() => launch.cancel(why, 137), OOM_EXIT_WAIT_MS);
      else launch.cancel(why, 143);
    });
    void signals.next.then((signal) => launch.interrupt(signal));
    const limit = o.stepTimeout;
    const timeout = limit === undefined ? undefined : setTimeout(() => launch.cancel(limit.why, limit.code), limit.seconds * 1000);
    const result = await launch.run();
    clearTimeout(timeout);
    clearTimeout(oomWait);
    mark("l.ended");
    offState();
    sink.flush();
    file?.close();
    pool.close();

    // 3. Give back what this run asked for, and wait until the controller has it.
    if (owned && !isFinal(link.latest?.state ?? "")) {
      link.release(result.exitCode, result.failure, result.lostNode, launch.interrupted);
      const deadline = Date.now() + 3000;
      while (!isFinal(link.latest?.state ?? "") && Date.now() < deadline) await Promise.race([link.nextState(), Bun.sleep(200)]);
    } else {
      await Bun.sleep(20);
    }
    mark("l.released");
    return result.exitCode;
  } catch (e) {
    await cancelOwned();
    if (e instanceof ApiClientError) {
      o.say(e.message);
      return 1;
    }
    throw e;
  } finally {
    signals.dispose();
    link.close();
  }
}

/**
 * The file sink of a step whose output goes to files (ebb run -o/-e), the patterns expanded for it;
 * srun's per-rank ones too: %t the rank, %n its node's index in the step, %N that node's name.
 */
function stepFileSink(o: NonNullable<RunOptions["output"]>, how: { label: boolean; unbuffered?: boolean; distribution?: StepSpec["distribution"] }, g: StepGrant, cwd: string): ReturnType<typeof rankFileSink> {
  const e = g.jobEnv;
  const vars = { j: String(g.jobId), s: String(g.stepId), J: `${g.jobId}.${g.stepId}`, x: e.EBB_JOB_NAME ?? "", u: currentUser(), A: e.EBB_ARRAY_JOB_ID ?? String(g.jobId), a: arrayTaskVar(e.EBB_ARRAY_TASK_ID) };
  const nodeOf = nodeOfRanks(g.tasks, how.distribution);
  const ofRank = (pattern: string) => {
    if (!perRankPattern(pattern)) {
      const path = expandPattern(pattern, vars, cwd);
      return () => path;
    }
    // Once per rank (the sink asks at every write); a rank spawned beyond the step's (MPI_Comm_spawn) writes where rank 0 does.
    const paths = nodeOf.map((node, rank) => expandPattern(pattern, { ...vars, t: String(rank), n: String(node), N: g.nodes[node]?.name ?? "" }, cwd));
    return (rank: number) => paths[rank] ?? paths[0]!;
  };
  return rankFileSink(ofRank(o.path), o.error === undefined ? undefined : ofRank(o.error), nodeOf.length, { label: how.label, unbuffered: how.unbuffered, append: o.append });
}
