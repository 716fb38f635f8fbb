/**
 * One launch: a step and the steps its ranks spawn (PMI spawn) onto new nodes. Spawned steps get
 * their own grant from the controller, their own KVS holding the parent's pre-put keys, and share
 * the launch's output. The launch ends when every step has; the first failure stops them all.
 */
import type { StepGrant } from "../../proto/requests.ts";
import type { PmiMode, SpawnRequest, StepSpec } from "../../proto/step.ts";
import type { PeerConn } from "../../tbon/pool.ts";
import type { StepCredential } from "../../proto/common.ts";
import type { JobStart } from "../../proto/agent.ts";
import { envDigest } from "../../proto/credential.ts";
import { Adapter } from "./adapter.ts";
import { warmResizeDecodingSoon } from "./warm-decode.ts";
import { checkpointDir, rankFailureGrace } from "./restart.ts";
import { CR } from "../../proto/adapt.ts";
import { OpenAhead } from "./open-ahead.ts";
import type { ControllerLink } from "./controller-link.ts";
import { StepRoot, type SpawnOutcome, type StepResult, type StepSink } from "./step-root.ts";

export interface LaunchOptions {
  link: ControllerLink;
  grant: StepGrant;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  fanout: number;
  pmi: PmiMode;
  pmiPort?: boolean;
  cfg?: "on" | "off";
  /** How ranks are bound to their job's cores on each node (StepSpec.cpuBind; default cores). */
  cpuBind?: "none" | "cores";
  connect(addr: string): PeerConn;
  /** Opens the connection `connect(addr)` will give, ahead of its first message (PeerPool.prepare): true if it opened one. */
  openAhead?(addr: string): boolean;
  sink: StepSink;
  /** Where the sink writes, when it is a file on one of the step's nodes (see StepSpec.outputFile). */
  outputFile?: { node: string; path: string; error?: string };
  /** Seconds a spawn may wait for idle nodes. */
  spawnWait: number;
  /** Report ended steps to the controller (spawned ones always are: their nodes go back). */
  reportPrimary: boolean;
  /** A failed rank leaves the others running (srun's default; StepRootOptions.keepGoing). */
  keepGoing?: boolean;
  /** Ranks' ends said in srun's words, a rank not started ending with execve's errno (StepRootOptions.srun). */
  srun?: boolean;
  /** Each rank is shown one GPU of its node's, this many to a GPU (StepSpec.tasksPerGpu). */
  tasksPerGpu?: number;
  /** How the first step's ranks are numbered over its nodes (srun -m; StepSpec.distribution); absent: block. */
  distribution?: StepSpec["distribution"];
  /** The step's name, if it has one of its own (SLURM_JOB_NAME of its ranks, as srun -J sets it). */
  name?: string;
  /** This process's standard input, for the first step's ranks `ranks` (StepSpec.stdin); those a spawn or a grow adds read nothing. */
  stdin?: { source: ReadableStream<Uint8Array>; ranks: "all" | number };
}

/** A command job's start: what its step 0 is launched from. */
export type CommandStart = JobStart & { argv: string[]; cred: StepCredential };

/** Whether `job` can be launched as a command job's step 0: it has its argv and its step credential. */
export const isCommandStart = (job: JobStart): job is CommandStart => job.kind === "command" && job.argv !== undefined && job.cred !== undefined;

/**
 * The launch of a command job's step 0 from its start (the controller's JobStart), wherever its
 * root runs: in its first node's agent, or on the controller's host.
 */
export function commandLaunch(job: CommandStart, o: Pick<LaunchOptions, "link" | "fanout" | "connect" | "openAhead" | "sink" | "outputFile">): Launch {
  return new Launch({
    ...o,
    grant: { jobId: job.id, stepId: 0, nodes: job.nodes, tasks: job.tasks, jobNodes: job.nodes.map((n) => n.name), cred: job.cred, jobEnv: job.jobEnv, elastic: job.elastic, sampleInterval: job.sampleInterval },
    argv: job.argv,
    env: job.env,
    cwd: job.cwd,
    pmi: "both",
    spawnWait: 30,
    reportPrimary: false,
  });
}

/** What one started step gives: its root, when its ranks all run, and when it ends. */
interface Started {
  root: StepRoot;
  launched: Promise<void>;
  done: Promise<StepResult>;
}

export class Launch {
  private readonly roots = new Map<number, StepRoot>();
  private readonly pending = new Set<Promise<unknown>>();
  private failure: { result: StepResult } | undefined;
  private adapter: Adapter | undefined;
  /** Joining steps stopped because their adaptation was aborted: their end is not a failure. */
  private readonly abandoned = new Set<StepRoot>();
  /** The signal that stopped ebb run, if one did: its steps end CANCELLED. */
  interrupted: string | undefined;

  constructor(private readonly o: LaunchOptions) {}

  /** Runs to the end of every step; the primary step's result, or the first failure's. */
  async run(): Promise<StepResult> {
    const g = this.o.grant;
    const elastic = g.elastic
      ? { status: "new" as const, generation: 0, rankBase: 0, worldSize: g.tasks.reduce((a, b) => a + b, 0), sampleInterval: g.elastic.sampleInterval }
      : undefined;
    // Checkpoint-restart ranks (libebb) find where their checkpoints go in their KVS.
    const dir = checkpointDir(this.o.env, this.o.cwd, g.jobId);
    const stdin = this.o.stdin;
    const spec = this.spec(g, { argv: this.o.argv, elastic, universeSize: g.elastic ? g.elastic.maxNodes * Math.max(...g.tasks) : undefined, ...(elastic ? { preput: { [CR.dir]: dir } } : {}), ...(stdin ? { stdin: stdin.ranks } : {}), ...(this.o.distribution && !elastic ? { distribution: this.o.distribution } : {}) });
    const primary = this.start(spec, g.cred, this.o.reportPrimary, stdin?.source);
    if (elastic) {
      this.adapter = new Adapter(
        this.o.link,
        {
          // Joining ranks are new: the standard input is the first step's.
          startJoining: (s, cred) => this.start({ ...s, stdin: undefined }, cred, true),
          abandon: (root, why) => {
            this.abandoned.add(root);
            root.cancel(`the adaptation these ranks joined was aborted: ${why}`, 143);
          },
          notice: (text) => this.o.sink.notice(text),
          checkpointDir: dir,
          rankFailureGraceMs: rankFailureGrace(g.elastic?.downAfterMs),
        },
        { spec, root: primary.root },
      );
      const adapter = this.adapter;
      const ahead = new OpenAhead(this.o.openAhead ?? (() => false), (m) => adapter.realloc(m));
      this.o.link.takeResizes(
        g.stepId,
        g.cred,
        () => adapter.placement().tasks,
        (m) => ahead.realloc(m),
        (nodes) => ahead.links(nodes),
      );
      warmResizeDecodingSoon();
    }
    let result = await primary.done;
    // A checkpoint-restart world ended its step on purpose: it goes on in the step it restarted in.
    for (let next = this.adapter?.nextStep(); next; next = this.adapter?.nextStep()) result = await next;
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    return this.failure?.result ?? result;
  }

  cancel(reason: string, code: number): void {
    // A restart under way ends with the launch.
    this.adapter?.fail(reason);
    for (const r of this.roots.values()) r.cancel(reason, code);
  }

  /** ebb run got `signal` (Ctrl-C): every rank is killed, and the steps are recorded CANCELLED. */
  interrupt(signal: string): void {
    this.interrupted = signal;
    this.cancel("interrupted; killing all ranks", 130);
  }

  private spec(g: StepGrant, extra: Partial<StepSpec> & { argv: string[] }): StepSpec {
    return {
      jobId: g.jobId,
      stepId: g.stepId,
      env: this.o.env,
      cwd: this.o.cwd,
      nodes: g.nodes,
      tasks: g.tasks,
      jobNodes: g.jobNodes,
      fanout: this.o.fanout,
      pmi: this.o.pmi,
      pmiPort: this.o.pmiPort,
      ...(this.o.cfg === "off" ? { cfg: "off" as const } : {}),
      ...(this.o.cpuBind === "none" ? { cpuBind: "none" as const } : {}),
      ...(this.o.tasksPerGpu !== undefined ? { tasksPerGpu: this.o.tasksPerGpu } : {}),
      ...(g.cores !== undefined ? { cores: g.cores } : {}),
      jobEnv: g.jobEnv,
      ...(g.sampleInterval !== undefined ? { sampleInterval: g.sampleInterval } : {}),
      outputFile: this.o.outputFile,
      ...(this.o.name !== undefined ? { name: this.o.name } : {}),
      ...extra,
    };
  }

  private start(spec: StepSpec, cred: StepCredential, report: boolean, stdin?: ReadableStream<Uint8Array>): Started {
    let launchedNow!: () => void;
    const launched = new Promise<void>((r) => (launchedNow = r));
    const root = new StepRoot({
      spec,
      cred,
      connect: this.o.connect,
      sink: this.o.sink,
      onLaunched: () => launchedNow(),
      keepGoing: this.o.keepGoing,
      srun: this.o.srun,
      stdin,
      onSpawn: (req) => this.spawn(spec, req),
      onAdapt: (r) => this.adapter?.report(r),
      onExit: (e) => this.adapter?.exit(spec, e),
      onCfg: (r) =>
        this.o.link.cfg({
          stepId: spec.stepId,
          ntasks: spec.elastic?.worldSize ?? spec.tasks.reduce((a, b) => a + b, 0),
          elastic: spec.elastic !== undefined,
          final: r.final,
          reports: r.reports,
          cfg: r.cfg,
          ...(r.monitor !== undefined ? { monitor: r.monitor } : {}),
        }),
      onNodeLost: spec.elastic ? (node, reason) => this.adapter?.nodeLost(node, reason) ?? false : undefined,
      holdRankFailure: spec.elastic ? () => this.adapter?.holdRankFailure(root) ?? 0 : undefined,
      adoptCredential: spec.elastic ? (nodes) => this.o.link.adoptCredential(spec.stepId, nodes) : undefined,
    });
    this.roots.set(spec.stepId, root);
    const done = root.start().then((r) => {
      this.roots.delete(spec.stepId);
      if (report) this.o.link.stepEnded(spec.stepId, r.exitCode, r.failure, this.interrupted);
      if (r.exitCode !== 0 && !this.failure && !this.abandoned.has(root)) {
        const why = `step ${spec.jobId}.${spec.stepId} failed: ${r.failure ?? `exit code ${r.exitCode}`}`;
        // A grow's joining step that fails before the commit fails that resize only.
        if (this.adapter?.joiningFailed(root, why)) return r;
        this.failure = { result: r };
        this.adapter?.fail(why);
        this.cancel(why, r.exitCode);
      }
      return r;
    });
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return { root, launched, done };
  }

  /** MPI_Comm_spawn: new processes on nodes the job did not have; answered once they run. */
  private async spawn(parent: StepSpec, req: SpawnRequest): Promise<SpawnOutcome> {
    const tasks = req.commands.reduce((a, c) => a + c.maxprocs, 0);
    const first = req.commands[0]!;
    const g = await this.o.link.createStep({ argv: [first.execname, ...first.args], tasks, newNodes: true, wait: this.o.spawnWait, cwd: this.o.cwd, envDigest: envDigest(this.o.env) });
    const apps = req.commands.length > 1 ? req.commands.map((c) => ({ argv: [c.execname, ...c.args], count: c.maxprocs })) : undefined;
    // No output file: the spawned ranks run on other nodes than the one writing it, and their credential does not cover it.
    const spec = this.spec(g, { argv: [first.execname, ...first.args], apps, spawn: { preput: req.preput, parent: `${parent.jobId}.${parent.stepId}` }, outputFile: undefined });
    const started = this.start(spec, g.cred, true);
    return Promise.race([
      started.launched.then(() => ({ rc: 0, errcodes: new Array<number>(tasks).fill(0), jobId: `${g.jobId}.${g.stepId}` })),
      started.done.then((r) => ({ rc: -1, message: r.failure ?? "the spawned processes did not start" })),
    ]);
  }
}
