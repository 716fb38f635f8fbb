/**
 * The node-local end of the step tree. A launch arrives from the parent (a launcher or another
 * agent); the node checks its credential, passes it on to its children, starts its own ranks and
 * reports `launched` once its whole subtree has. Exits, output and errors go up as they happen.
 *
 *   parent --launch/signal/end--> StepNode --same--> children
 *   parent <--launched(sum)/io/exit/error-- StepNode <--same-- children
 */
import { mark } from "../../util/trace.ts";
import { asUser, identityFor, ownUid, type Identity } from "../identity.ts";
import { closeSync } from "node:fs";
import { DISCARDED, openingFiles, type OutputFiles } from "./output-after-drop.ts";
import { OutputWindow } from "./output-window.ts";
import { OutputRelay } from "./output-relay.ts";
import { expiryRefusal } from "../../proto/credential.ts";
import { launchRefusal, nodeIndexIn, signatureRefusal, stepRanks, stepRanksOf } from "./launch-checks.ts";
import type { NodeAllocation, UsedCredentials } from "./allocation.ts";
import { stepKey, type AdoptCredential, type StepCredential } from "../../proto/common.ts";
import type { StepDown, StepSpec, StepUp } from "../../proto/step.ts";
import type { DownstreamHandle, PeerConn, PeerPool, StepEndpoint, Upstream } from "../../tbon/pool.ts";
import { childrenOf, parentOf, ROOT } from "../../tbon/tree.ts";
import { logger } from "../../util/log.ts";
import { jobPath, ownerOf, rankVars, stepNodeNames } from "./env.ts";
import { rankSlices, sharedRankCpus } from "./affinity.ts";
import { crowdedRankVars, ranksOutnumberCpus } from "./crowded-ranks.ts";
import type { JobPlacement } from "./placement.ts";
import { pump, SpawnError, type Proc, type ProcessTable } from "./procs.ts";
import { argvOf, StepPmi, worldSizeOf } from "./step-pmi.ts";
import { StepAdapt, type PerfSample } from "./step-adapt.ts";
import { StepCfg } from "./step-cfg.ts";
import type { CfgLib } from "./cfg-lib.ts";
import { PmiPaces } from "./pmi-pace.ts";
import { programPaths, type NamedPath, type PathProbes } from "./path-probe.ts";
import { SubtreeCfg } from "../../cfg/subtree.ts";
import { below, readerNodes } from "../../tbon/stdin-route.ts";
import { pipe } from "../../util/pipe.ts";
import { StepStdin } from "./step-stdin.ts";
import { UserBytes } from "../../domain/user-bytes.ts";
import { USER_KVS_MAX_BYTES } from "../../pmi/index.ts";

import type { TrustedCa } from "../../api/client.ts";

const log = logger("agent");

export interface StepContext {
  name: string;
  clusterKey: string;
  controllerUrl: string;
  /** The address this agent is reached at (its advertised one): ranks advertise it to their peers (EBB_NODE_HOST). */
  nodeHost: string;
  /** In a TLS cluster: the cluster CA, as a file job processes can read (EBB_CA). */
  controllerCa?: TrustedCa;
  procs: ProcessTable;
  pool: PeerPool;
  /** A job process's environment: the agent's, then the overlays, with `ebb` first on PATH; a new object each call, the caller's to change. */
  processEnv(...overlays: Record<string, string>[]): Record<string, string>;
  /** The job's CPUs on this node (the machine's ids), its cores here (SLURM_CPUS_ON_NODE) and the variables that show it its GPUs. */
  placement(jobId: number): JobPlacement;
  /** The job's PMI name service, kept by the controller. */
  /** `error`: the controller refused the request (a cap), saying why. */
  names(jobId: number, op: "publish" | "lookup" | "unpublish", service: string, port?: string): Promise<{ ok: boolean; port?: string; error?: string }>;
  /** Timing samples of an elastic job's ranks on this node. */
  perf(jobId: number, sample: PerfSample): void;
  /** How many of the job's processes here the kernel killed for its memory limit (its cgroup's count). */
  oomKills(jobId: number): number;
  /** The CFG library for MPI ranks on this node, or why there is none. */
  cfgLibrary(): Promise<CfgLib>;
  /** An EPOP program's structure or progress. */
  program(jobId: number, info: Record<string, string>): void;
  /** Where probe slots live (node-shared memory). */
  shmDir: string;
  /** The job the controller last said this node belongs to. */
  allocation: NodeAllocation;
  /** Credentials already used for a launch here. */
  usedCredentials: UsedCredentials;
  /** Looks a step's paths up off the agent's thread first (path-probe.ts). */
  paths: PathProbes;
}

/** How long a launch waits for the controller's word that the node belongs to its job (the controller may be restarting). */
const ALLOCATION_WAIT_MS = 10_000;
/** How long an elastic step's node whose parent agent was lost waits for the launcher to adopt it. */
const ADOPT_WAIT_MS = 10_000;

export class StepService implements StepEndpoint {
  readonly steps = new Map<string, StepNode>();
  /** What each user's steps here hold in their PMI key-value spaces together (USER_KVS_MAX_BYTES). */
  readonly kvsBytes = new UserBytes(USER_KVS_MAX_BYTES);
  /** How fast each user's ranks here may send PMI (pmi-pace.ts). */
  readonly pmiPaces = new PmiPaces((user) => this.ctx.allocation.sharedWith(user || null));

  constructor(readonly ctx: StepContext) {}

  /** The agent stops: every step here ends (its ranks killed, its PMI server, adaptation segment and CFG directory gone). */
  closeAll(): void {
    for (const node of [...this.steps.values()]) node.close();
  }

  attach(up: Upstream, inProcess = false): DownstreamHandle {
    const launchedHere = new Set<string>();
    // Launches still waiting for the allocation hear of the close through this: they never start.
    const upstreamGone = new AbortController();
    return {
      deliver: (msg) => {
        if (msg.t === "launch") {
          mark("a.launch", msg.spec.stepId);
          void this.launch(up, msg.cred, msg.spec, inProcess, upstreamGone.signal).then((node) => {
            if (node) launchedHere.add(node.key);
          });
          return;
        }
        if (msg.t === "adopt") {
          if (this.adopt(up, msg.step, msg.cred)) launchedHere.add(msg.step);
          return;
        }
        const node = this.steps.get(msg.step);
        if (node && node.upstream === up) node.down(msg);
      },
      closed: () => {
        upstreamGone.abort();
        for (const key of launchedHere) this.steps.get(key)?.upstreamLost(up);
        launchedHere.clear();
      },
    };
  }

  /** A launcher re-attaches a step's node to itself (see adoptionRefusal): true if it did. */
  private adopt(up: Upstream, step: string, cred: AdoptCredential): boolean {
    const why = adoptionRefusal(this, step, cred);
    if (why) {
      log.warn(`refused adoption of step ${step}: ${why}`);
      up.send({ t: "error", step, node: this.ctx.name, kind: "adopt", message: `${this.ctx.name}: ${why}` });
      return false;
    }
    this.steps.get(step)!.adopt(up);
    return true;
  }

  /** Keys of launches waiting for the allocation: a second launch of the same step is refused meanwhile. */
  private readonly starting = new Set<string>();

  /**
   * A credential's expiry is checked where its launch enters the agents: from a socket (a
   * launcher, another host's agent). A launch from this process (`inProcess`) comes from an agent
   * of this process that accepted it, expiry checked, and passes it down its step tree, or from a
   * command job's launcher here, with the credential the controller's link just brought: the
   * expiry bounds how long a credential that left the trusted processes is good, and this one did
   * not leave them. So a loaded fan-out across `ebb up`'s agents (one thread, seconds per hundred
   * nodes) is not refused half-way for outlasting the lifetime, which stays what it was. Signature,
   * step, nodes, single use, covers and allocation are checked here every time as before.
   *
   * A launch whose connection closes (`upstreamGone`) while it waits for the allocation is dropped:
   * nobody would collect its ranks' exits or stop them. Its credential stays used.
   */
  private async launch(up: Upstream, cred: StepCredential, spec: StepSpec, inProcess: boolean, upstreamGone: AbortSignal): Promise<StepNode | undefined> {
    const key = stepKey(spec.jobId, spec.stepId);
    const fail = (message: string) => {
      log.warn(`refused launch of step ${key}: ${message}`);
      up.send({ t: "error", step: key, node: this.ctx.name, kind: "launch", message });
    };
    const refused = launchRefusal(this.ctx.clusterKey, cred, spec) ?? (inProcess ? undefined : expiryRefusal(cred));
    if (refused) return fail(refused), undefined;
    const index = nodeIndexIn(spec, this.ctx.name);
    if (index < 0) return fail(`node ${this.ctx.name} is not in the step`), undefined;
    if (this.steps.has(key) || this.starting.has(key)) return fail(`step ${key} is already running here`), undefined;
    if (!this.ctx.usedCredentials.use(cred.sig, cred.expires)) return fail(`the credential of step ${key} was used here already`), undefined;
    this.starting.add(key);
    const allocated = await this.ctx.allocation.waitFor(spec.jobId, ALLOCATION_WAIT_MS, upstreamGone).finally(() => this.starting.delete(key));
    if (upstreamGone.aborted) return log.warn(`dropped launch of step ${key}: its step connection closed before it started`), undefined;
    if (!allocated) return fail(`node ${this.ctx.name} is not allocated to job ${spec.jobId}`), undefined;
    mark("a.allocated", spec.stepId);
    const node = new StepNode(this, key, spec, index, up);
    this.steps.set(key, node);
    node.start(cred);
    return node;
  }
}

/**
 * Why a launcher may not re-attach this node's part of a running step to itself (its parent in the
 * launch tree was lost), or undefined: checked as strictly as a launch — signed by the cluster key,
 * unexpired, an adoption credential for exactly this step naming this node, used once here, the
 * node still the job's as the controller last said.
 */
function adoptionRefusal(svc: StepService, step: string, cred: AdoptCredential): string | undefined {
  const name = svc.ctx.name;
  const bad = signatureRefusal(svc.ctx.clusterKey, cred) ?? expiryRefusal(cred);
  if (bad) return bad;
  if (stepKey(cred.jobId, cred.stepId) !== step) return "the credential does not match the step";
  if (!cred.nodes.includes(name)) return `node ${name} is not in the credential`;
  if (!svc.steps.has(step)) return `step ${step} is not running on ${name}`;
  if (!svc.ctx.allocation.holds(cred.jobId)) return `node ${name} is not allocated to job ${cred.jobId}`;
  if (!svc.ctx.usedCredentials.use(cred.sig, cred.expires)) return `the credential was used on ${name} already`;
  return undefined;
}

interface Child {
  index: number;
  name: string;
  conn: PeerConn;
  unsubscribe: () => void;
  launched?: number;
  /** Its messages, in order, its output as this node's window allows. */
  relay?: OutputRelay;
}

export class StepNode {
  private readonly children: Child[] = [];
  private readonly ranks = new Map<number, Proc>();
  private localLaunched = false;
  private sentLaunched = false;
  private killedWith: NodeJS.Signals | undefined;
  private done = false;
  private pmi: StepPmi | undefined;
  private adapt: StepAdapt | undefined;
  private cfg: StepCfg | undefined;
  /** This node's CFG merged with its children's subtrees, sent up the step tree (§10.2.3). */
  private cfgTree: SubtreeCfg | undefined;
  private cfgSentAt = Number.NEGATIVE_INFINITY;
  private cfgFinalSent = false;
  /** World rank of the step's rank 0 (elastic steps that joined a running world start above 0). */
  private readonly rankBase: number;
  /** Where up-messages go: the parent, or whoever adopted this node after the parent was lost. */
  upstream: Upstream;
  /** The parent is gone and an adoption is awaited: up-messages wait here. */
  private orphan: { held: StepUp[]; timer: ReturnType<typeof setTimeout> } | undefined;
  /** A launcher adopted this node: its parent is the launcher now. */
  private adopted = false;
  /** This node's ranks that read the launcher's standard input, and the children whose subtrees hold such ranks. */
  private stdin: { pipes: StepStdin; reads(rank: number): boolean } | undefined;
  private stdinChildren: Child[] = [];
  /** Output (its ranks' and its children's) sent up and not yet acknowledged (docs/output.md). */
  private readonly output = new OutputWindow();

  constructor(
    private readonly svc: StepService,
    readonly key: string,
    readonly spec: StepSpec,
    readonly index: number,
    upstream: Upstream,
  ) {
    this.upstream = upstream;
    this.rankBase = spec.elastic?.rankBase ?? 0;
  }

  private get ctx(): StepContext {
    return this.svc.ctx;
  }

  start(cred: StepCredential): void {
    const k = this.spec.fanout;
    const spec = this.spec;
    const worldRanks = stepRanksOf(spec, this.index).map((r) => this.rankBase + r);
    const children = childrenOf(this.index, spec.nodes.length, k);
    if (spec.elastic) {
      this.adapt = new StepAdapt({
        node: this.ctx.name,
        key: this.key,
        spec: spec as StepSpec & { elastic: NonNullable<StepSpec["elastic"]> },
        ranks: worldRanks,
        children,
        up: (m) => this.up(m),
        merge: (entries) => this.pmi?.merge(entries),
        left: (rank) => this.pmi?.removeRank(rank),
        perf: (sample) => this.ctx.perf(spec.jobId, sample),
        program: (info) => this.ctx.program(spec.jobId, info),
        shmDir: this.ctx.shmDir,
        openAs: (fn) => asUser(this.runAs(), fn),
      });
    }
    if ((spec.pmi !== "none" || spec.elastic) && spec.cfg !== "off") {
      this.cfgTree = new SubtreeCfg(children);
      this.cfg = new StepCfg({
        node: this.ctx.name,
        spec,
        ranks: worldRanks,
        ntasks: worldSizeOf(spec),
        shmDir: this.ctx.shmDir,
        openAs: (fn) => asUser(this.runAs(), fn),
        interval: this.sampleInterval,
        send: (cfg, final, monitor) => {
          this.cfgTree!.local(cfg, final, monitor);
          this.forwardCfg();
        },
      });
    }
    if (spec.pmi !== "none" || spec.elastic) {
      this.pmi = new StepPmi({
        node: this.ctx.name,
        key: this.key,
        spec,
        ranks: worldRanks,
        rankUid: this.runAs()?.uid ?? ownUid(),
        children,
        // An agent that is not root runs every step as its own user: one share for all.
        kvsShare: this.svc.kvsBytes.of(this.ctx.allocation.userOf(spec.jobId) ?? ""),
        pace: this.svc.pmiPaces.of(this.ctx.allocation.userOf(spec.jobId) ?? "", this.key),
        up: (m) => this.up(m),
        names: (op, service, port) => this.ctx.names(spec.jobId, op, service, port),
        extension: this.adapt ? (rank, cmd, args) => this.adapt!.extension(rank, cmd, args) : undefined,
      });
    }
    const readers = readerNodes(spec.tasks, spec.stdin, spec.distribution ? stepRanks(spec) : undefined);
    if (readers.includes(this.index)) {
      const only = spec.stdin;
      const pipes = new StepStdin(
        (seq) => this.up({ t: "stdin.ack", step: this.key, node: this.ctx.name, seq }),
        (why) => log.warn(`step ${this.key}: ${why}`),
      );
      this.stdin = { pipes, reads: (rank) => only === "all" || only === rank };
    }
    for (const c of children) {
      const ref = this.spec.nodes[c]!;
      const conn = this.ctx.pool.get(ref.addr);
      const child: Child = { index: c, name: ref.name, conn, unsubscribe: () => {} };
      const relay = (child.relay = new OutputRelay(this.output, (m) => this.fromChild(child, m), (chars) => conn.send({ t: "io.ack", step: this.key, chars })));
      child.unsubscribe = conn.subscribe(this.key, {
        onUp: (m) => relay.take(m),
        onLost: (reason) => this.childLost(child, reason),
      });
      this.children.push(child);
      // Every rank reading: every edge (a subtree of nodes without ranks takes a piece it ignores).
      if (spec.stdin === "all" || readers.some((r) => below(r, c, k))) this.stdinChildren.push(child);
      conn.send({ t: "launch", step: this.key, cred, spec: this.spec });
    }
    mark("a.step-objects");
    void this.startRanks();
  }

  private get sampleInterval(): number {
    return this.spec.sampleInterval ?? this.spec.elastic?.sampleInterval ?? 60;
  }

  /**
   * Sends the subtree's CFG up: at once when the whole subtree is final, else at most once per
   * sampling interval (this node's own reports come once per interval, and bring the newest of
   * its children's along).
   */
  private forwardCfg(): void {
    const tree = this.cfgTree;
    if (!tree || this.cfgFinalSent || !tree.dirty) return;
    const now = Date.now();
    if (!tree.complete && now - this.cfgSentAt < this.sampleInterval * 900) return;
    const r = tree.merged();
    if (!r) return;
    this.cfgSentAt = now;
    if (r.final) this.cfgFinalSent = true;
    this.up({ t: "cfg", step: this.key, ...r });
  }

  private up(msg: StepUp): void {
    if (this.done) return;
    if (this.orphan) this.orphan.held.push(msg);
    else this.upstream.send(msg);
  }

  private async startRanks(): Promise<void> {
    const spec = this.spec;
    try {
      await this.pmi?.listen();
    } catch (e) {
      this.up({ t: "error", step: this.key, node: this.ctx.name, kind: "launch", message: `${this.ctx.name}: cannot open a PMI port: ${(e as Error).message}` });
    }
    mark("a.pmi-listening");
    const here = stepRanksOf(spec, this.index);
    const count = here.length;
    // Every path of the user's the ranks use answered first, off this thread, as she sees them
    // (path-probe.ts): the directory, each rank's program (MPMD: several), the output files. The
    // agent's thread touches none of them: her ranks' shells enter the directory and execute the
    // program after the drop.
    const [first, ...others] = [...new Set(here.map((r) => argvOf(spec, this.rankBase + r)[0] ?? ""))].map((p) => programPaths(p, spec.cwd, jobPath(spec.env)));
    const cwd = { what: "working directory", path: spec.cwd };
    // Step 0 of a command job started here: its start looked these up already (jobs.ts).
    const found = count === 0 ? undefined : await this.ctx.paths.lookUp(this.runAs(), [cwd, ...(first ?? []), ...others.flat(), ...this.outputPaths()], undefined, spec.stepId === 0 ? { vouched: spec.jobId } : undefined);
    if (this.done) return;
    if (found?.why) return this.failLaunch(here, `${this.ctx.name}: ${found.why}`);
    if (found?.missing.includes(cwd)) return this.failLaunch(here, `working directory ${spec.cwd} does not exist on ${this.ctx.name}`);
    // MPI executables get the CFG interposition library (compiled at first need), or run
    // unmonitored with the reason reported: whether the first program links MPI is her look-up's answer too.
    const exe = this.cfg && found?.found.find((p) => first!.some((f) => f.path === p));
    const mpi = exe !== undefined && (await this.ctx.paths.linksMpi(this.runAs(), exe));
    if (this.done) return;
    // The ranks' CFG directory, as the user (in the node's shared memory, a name of the agent's).
    if (count > 0 && this.cfg) asUser(this.runAs(), () => this.cfg!.make());
    const files = this.outputFiles();
    let preload: Record<string, string> = {};
    if (this.cfg && mpi) {
      const lib = await this.ctx.cfgLibrary();
      if ("path" in lib) preload = { LD_PRELOAD: [lib.path, ...(spec.env.LD_PRELOAD ? [spec.env.LD_PRELOAD] : [])].join(":") };
      else this.cfg.unmonitored(lib.reason);
    }
    const names = spec.elastic?.worldNodes ?? stepNodeNames(spec);
    const nodeIndex = spec.elastic?.worldNodes ? names.indexOf(this.ctx.name) : nodeIndexIn(spec, this.ctx.name);
    const worldSize = worldSizeOf(spec);
    const job = this.ctx.placement(spec.jobId);
    const base = this.ctx.processEnv(spec.env, spec.jobEnv, job.vars);
    const worldRanks = here.map((r) => this.rankBase + r);
    const bound = (spec.cpuBind ?? "cores") === "cores";
    // An exact step's ranks: slices of its own cores (their CPUs), not of all of the job's.
    const own = bound && spec.cores?.[nodeIndex] ? job.cpusOf?.(spec.cores[nodeIndex]) : undefined;
    const slices = !bound ? undefined : own?.length ? rankSlices(own, count) : job.ownCpus ? rankSlices(job.cpus, count) : sharedRankCpus(job.cpus, worldRanks, worldSize);
    const crowded = crowdedRankVars(base, bound && ranksOutnumberCpus(job.cpus.length, count, worldSize, job.ownCpus));
    // srun -c N gives the step's ranks their own SLURM_CPUS_PER_TASK, over the job's.
    const stepCpusPerTask: Record<string, string> = spec.env.SLURM_CPUS_PER_TASK !== undefined ? { SLURM_CPUS_PER_TASK: spec.env.SLURM_CPUS_PER_TASK } : {};
    for (let i = 0; i < count; i++) {
      const rank = here[i]!;
      const world = this.rankBase + rank;
      const place = { stepId: spec.stepId, nodes: names, tasks: names.length === spec.tasks.length ? spec.tasks : [], ...(spec.distribution ? { ranksHere: here } : {}), distribution: spec.env.SLURM_DISTRIBUTION, nodeIndex, localId: i, rank: world, size: worldSize, cpusOnNode: job.cores, gpus: job.gpus, stepName: spec.name, owner: ownerOf(this.runAs()) };
      const oneGpu = spec.tasksPerGpu !== undefined && job.gpus.length > 0 ? job.gpuVarsOf([job.gpus[Math.floor(i / spec.tasksPerGpu) % job.gpus.length]!]) : undefined;
      // The node's only rank takes `base` itself (a new object, this launch's): no copy of the job's whole environment.
      const env = Object.assign(count === 1 ? base : { ...base }, oneGpu, rankVars(place, this.ctx.controllerUrl, this.ctx.nodeHost, this.ctx.controllerCa?.path), stepCpusPerTask, this.pmi?.env(world), this.adapt?.env(world), this.cfg?.env(world), preload, crowded);
      mark("a.env-built");
      // Its files opened by the rank's own first process, after the drop; what it says before that (why it could not) is forwarded.
      const start = files && files !== "discard" ? openingFiles(files, argvOf(spec, world), env) : { argv: argvOf(spec, world), env };
      this.startRank(rank, start.argv, start.env, files === "discard" ? "ignore" : "pipe", slices?.[i] ?? job.cpus);
    }
    this.localLaunched = true;
    this.maybeLaunched();
  }

  /** This node's ranks do not start: each exits 1, after `message`. */
  private failLaunch(here: readonly number[], message: string): void {
    this.up({ t: "error", step: this.key, node: this.ctx.name, kind: "launch", message });
    for (const rank of here) this.up({ t: "exit", step: this.key, rank, node: this.ctx.name, code: 1 });
    this.localLaunched = true;
    this.maybeLaunched();
  }

  /** The step's output (and error) files, to look up first, when this node writes them. */
  private outputPaths(): NamedPath[] {
    const target = this.spec.outputFile;
    if (target?.node !== this.ctx.name) return [];
    return [{ what: "output file", path: target.path }, ...(target.error === undefined ? [] : [{ what: "error file", path: target.error }])];
  }

  /** The step's output (and error) files when this node writes them (each rank's first process appends to them, output-after-drop.ts), "discard" when both are DISCARDED, else undefined: forward. */
  private outputFiles(): OutputFiles | "discard" | undefined {
    const target = this.spec.outputFile;
    if (target?.node !== this.ctx.name) return undefined;
    return target.path === DISCARDED && (target.error ?? DISCARDED) === DISCARDED ? "discard" : { out: target.path, err: target.error, append: true };
  }

  /** Whom the step's ranks run as: the job's user when the agent is root, else undefined (the agent's user). */
  private runAs(): Identity | undefined {
    return identityFor(this.ctx.allocation.userOf(this.spec.jobId));
  }

  /** Starts one rank, bound to `cpus`. */
  private startRank(rank: number, argv: string[], env: Record<string, string>, out: "pipe" | "ignore", cpus: number[]): void {
    const node = this.ctx.name;
    let proc: Proc;
    let stdin: [number, number] | undefined;
    try {
      if (this.stdin?.reads(rank)) stdin = pipe();
      proc = this.ctx.procs.spawn(this.spec.jobId, argv, { cwd: this.spec.cwd, env, stdio: [out, out, this.pmi?.fd3], runAs: this.runAs(), cpus, stdin: stdin?.[0] });
    } catch (e) {
      if (stdin) closeSync(stdin[1]);
      const code = e instanceof SpawnError && e.code === "ENOENT" ? 127 : 126;
      this.up({ t: "error", step: this.key, node, rank, kind: "launch", message: `${node}: rank ${rank}: ${argv[0]}: ${(e as Error).message}`, code });
      this.up({ t: "exit", step: this.key, rank, node, code });
      return;
    } finally {
      if (stdin) closeSync(stdin[0]);
    }
    if (stdin) this.stdin!.pipes.add(rank, stdin[1]);
    mark("a.spawned");
    this.ranks.set(rank, proc);
    const world = this.rankBase + rank;
    if (proc.fd3 !== undefined) this.pmi?.attach(world, proc.fd3);
    if (this.killedWith) this.ctx.procs.signalGroup(proc.pid, this.killedWith);
    const output = Promise.all([
      pump(proc.stdout, (data) => this.sendOutput(rank, 1, data), () => this.output.room()),
      pump(proc.stderr, (data) => this.sendOutput(rank, 2, data), () => this.output.room()),
    ]);
    // The exit is reported after the rank's last output has been forwarded.
    void Promise.all([proc.exited, output.catch(() => {})]).then(([{ code, signal }]) => {
      mark("a.rank-exit");
      this.ranks.delete(rank);
      this.stdin?.pipes.rankExited(rank);
      this.adapt?.rankExited(world);
      this.cfg?.rankEnded(world);
      if (code === 0 && this.pmi?.exitedUnfinalized(world))
        this.up({ t: "error", step: this.key, node, rank, kind: "pmi", message: `rank ${world} on ${node} exited without finalizing PMI (MPI_Finalize not called?)` });
      if (signal && this.adapt && !this.killedWith && !this.done) this.ranksDied(world, signal);
      // A SIGKILL nobody here sent, in a job whose cgroup counts OOM kills: its memory limit.
      const oom = signal === "SIGKILL" && !this.killedWith && this.ctx.oomKills(this.spec.jobId) > 0;
      this.up({ t: "exit", step: this.key, rank, node, code: code ?? 128 + signalNumber(signal), ...(signal ? { signal } : {}), ...(oom ? { oom } : {}) });
    });
  }

  private maybeLaunched(): void {
    if (this.sentLaunched || !this.localLaunched || this.children.some((c) => c.launched === undefined)) return;
    this.sentLaunched = true;
    this.up({ t: "launched", step: this.key, count: 1 + this.children.reduce((a, c) => a + (c.launched ?? 0), 0) });
  }

  private sendOutput(rank: number, fd: 1 | 2, data: string): void {
    this.output.sent(data.length);
    this.up({ t: "io", step: this.key, rank, fd, data });
  }

  private fromChild(child: Child, msg: StepUp): void {
    if (msg.t === "launched") {
      child.launched = msg.count;
      this.maybeLaunched();
      return;
    }
    if (msg.t === "fence.in") {
      this.pmi?.fromChild(child.index, msg);
      return;
    }
    if (msg.t === "cfg" && this.cfgTree) {
      this.cfgTree.child(child.index, msg);
      this.forwardCfg();
      return;
    }
    if (this.adapt?.fromChild(child.index, msg)) return;
    this.up(msg);
  }

  private childLost(child: Child, reason: string): void {
    if (this.done) return;
    child.launched ??= 0;
    this.up({ t: "error", step: this.key, node: child.name, kind: "lost-node", message: `lost node ${child.name}: ${reason}` });
    this.pmi?.childLost(child.index);
    this.adapt?.childLost(child.index);
    this.cfgTree?.childLost(child.index);
    this.forwardCfg();
    this.maybeLaunched();
  }

  down(msg: StepDown): void {
    if (msg.t === "io.ack") return this.output.acked(msg.chars);
    if (msg.t === "stdin") {
      for (const c of this.stdinChildren) c.conn.send(msg);
      this.stdin?.pipes.piece(msg.seq, Buffer.from(msg.data, "base64"), msg.eof === true);
      return;
    }
    for (const c of this.children) c.conn.send(msg);
    switch (msg.t) {
      case "signal":
        this.signalRanks(msg.signal);
        return;
      case "end":
        this.finish();
        return;
      case "fence.out":
      case "spawn.result":
        this.pmi?.down(msg);
        return;
      case "launch":
        return;
      default:
        this.adapt?.down(msg);
        return;
    }
  }

  /**
   * A rank of an elastic step was killed, not by this agent (the agent reports its ranks dead):
   * this node's ranks leave the world together, as if the node had failed. The launcher is told
   * before the exit (so the exit is not taken for a failure of the step) and the node's other
   * ranks are killed, so that the survivors' fault window names exactly this node's ranks.
   */
  private ranksDied(world: number, signal: string): void {
    const node = this.ctx.name;
    const message = `rank ${world} on ${node} was killed by ${signal}; the ranks of ${node} are lost`;
    log.warn(`step ${this.key}: ${message}`);
    this.up({ t: "error", step: this.key, node, kind: "ranks-lost", message, code: 128 + signalNumber(signal) });
    this.signalRanks("SIGKILL");
  }

  private signalRanks(signal: NodeJS.Signals): void {
    if (signal === "SIGKILL" || signal === "SIGTERM" || signal === "SIGINT") {
      this.killedWith = signal;
      this.pmi?.fail(`the step is being stopped (${signal})`);
      this.adapt?.fail(`the step is being stopped (${signal})`);
    }
    for (const child of this.ranks.values()) this.ctx.procs.signalGroup(child.pid, signal);
  }

  /**
   * The link to the parent `from` is gone. An elastic step whose parent was an agent waits a while
   * for the launcher to adopt it (its ranks are healthy; the parent's loss is a fault the others
   * adapt to); otherwise, or if nobody does, nobody can collect this step any more, so it dies here
   * and below.
   */
  upstreamLost(from: Upstream): void {
    if (this.done || from !== this.upstream || this.orphan) return;
    if (this.spec.elastic && !this.adopted && parentOf(this.index, this.spec.fanout) !== ROOT) {
      log.warn(`step ${this.key}: lost its parent; waiting up to ${ADOPT_WAIT_MS / 1000} s for the launcher to adopt it`);
      this.orphan = { held: [], timer: setTimeout(() => this.abandon(), ADOPT_WAIT_MS) };
      return;
    }
    this.abandon();
  }

  /** A launcher took this node as its child (see StepService.adopt): what was held goes to it. */
  adopt(up: Upstream): void {
    const held = this.orphan?.held ?? [];
    if (this.orphan) clearTimeout(this.orphan.timer);
    this.orphan = undefined;
    this.upstream = up;
    this.adopted = true;
    log.info(`step ${this.key}: adopted by the launcher; ${held.length} held messages forwarded`);
    up.send({ t: "adopted", step: this.key, node: this.ctx.name });
    // What went to the lost parent is never acknowledged: only what is resent now is outstanding.
    this.output.restart(held.reduce((n, m) => n + (m.t === "io" ? m.data.length : 0), 0));
    for (const m of held) up.send(m);
  }

  private abandon(): void {
    if (this.done) return;
    this.orphan = undefined;
    log.warn(`step ${this.key}: lost its parent; killing its ranks`);
    for (const c of this.children) c.conn.send({ t: "signal", step: this.key, signal: "SIGKILL" });
    this.signalRanks("SIGKILL");
    for (const c of this.children) c.conn.send({ t: "end", step: this.key });
    this.finish();
  }

  /** The agent stops: the step ends here. */
  close(): void {
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.output.open();
    if (this.orphan) clearTimeout(this.orphan.timer);
    this.orphan = undefined;
    for (const c of this.children) c.unsubscribe();
    if (this.ranks.size > 0) this.signalRanks("SIGKILL");
    void this.pmi?.close();
    this.stdin?.pipes.close();
    this.adapt?.close();
    this.cfg?.close();
    this.svc.steps.delete(this.key);
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGBUS: 7, SIGFPE: 8, SIGILL: 4, SIGUSR1: 10, SIGUSR2: 12 };

export function signalNumber(signal: string | null): number {
  return (signal && SIGNALS[signal]) || 0;
}
