/**
 * The root of one step's tree: sends the launch to the first level of agents, gathers output,
 * exits and errors, and decides when the step is over and with which exit code. A rank that fails
 * (non-zero exit, signal, abort, lost node, failed launch) takes the whole step down, as mpiexec does.
 */
import { slurmstepdExecLine, srunExecCode, SrunEnds, srunTaskEnd, type TaskEnd } from "./srun-words.ts";
import { SubtreeCfg, type SubtreeReport } from "../../cfg/subtree.ts";
import { stepKey, type AdoptCredential, type StepCredential } from "../../proto/common.ts";
import type { SpawnRequest, StepDown, StepSpec, StepUp } from "../../proto/step.ts";
// Not pmi/index.ts: it brings pmi/socket.ts and node:net into every `ebb run` (~10 ms of CPU).
import { FenceMerge } from "../../pmi/fence-merge.ts";
import { CountedKvs, kvsCapExceeded } from "../../pmi/kvs.ts";
import { kvsPieces, sendPieces } from "../../pmi/kvs-pieces.ts";
import { firstRanks, ranksByNode } from "../../sched/layout.ts";
import type { PeerConn } from "../../tbon/pool.ts";
import { adaptReportOf, AdaptReductions, type AdaptReport } from "../../tbon/adapt-reduce.ts";
import { ROOT, childrenOf } from "../../tbon/tree.ts";
import { mark } from "../../util/trace.ts";
import { below, readerNodes } from "../../tbon/stdin-route.ts";
import { StdinFeed } from "./stdin-feed.ts";
import { OutputAcks } from "./output-acks.ts";

/** How long the root waits for an orphan's answer to `adopt` (the orphan waits 10 s for it). */
const ADOPT_ANSWER_MS = 5000;

export interface StepSink {
  io(rank: number, fd: 1 | 2, data: string): void;
  /** Undefined when all output given to `io` is written; else resolves once it is (docs/output.md). */
  drained?(): Promise<void> | undefined;
  /** A line about the step itself (failures), for the user. */
  notice(text: string): void;
}

export interface RankExit {
  rank: number;
  node: string;
  code: number;
  signal?: string;
}

export interface StepResult {
  exitCode: number;
  exits: RankExit[];
  /** The first thing that went wrong, if anything did. */
  failure?: string;
  /** A node the step lost contact with (its agent died or became unreachable). */
  lostNode?: string;
}

export interface SpawnOutcome {
  rc: number;
  errcodes?: number[];
  jobId?: string;
  message?: string;
}

export interface StepRootOptions {
  spec: StepSpec;
  cred: StepCredential;
  connect(addr: string): PeerConn;
  sink: StepSink;
  onLaunched?(): void;
  /** A rank's exit, as it is reported. */
  onExit?(exit: RankExit): void;
  /** Adaptation reductions of this step (elastic steps). */
  onAdapt?(report: AdaptReport): void;
  /** A rank asked for new processes on new nodes (PMI spawn); without this, spawn fails. */
  onSpawn?(request: SpawnRequest, from: { rank: number; node: string }): Promise<SpawnOutcome>;
  /**
   * A node of the step was lost (elastic steps): true if the step goes on without it (its ranks
   * count as gone, nothing is killed), false to fail the step as any lost node does.
   */
  onNodeLost?(node: string, reason: string): boolean;
  /**
   * Elastic steps: a credential (use "adopt") to re-attach `nodes`, the children of a lost inner
   * node of the launch tree, as the root's own children so that their healthy ranks go on. Without
   * it, a lost inner node's whole subtree is lost with it.
   */
  adoptCredential?(nodes: string[]): Promise<AdoptCredential>;
  /**
   * A rank failed (non-zero exit, abort): how long (ms) to hold the failure, ranks running, for a
   * node loss that explains it (a checkpoint-restart world's peers fail after a death; docs/adaptation.md
   * §12.4). 0 or absent: the step fails at once. A loss in time takes its course (onNodeLost); else
   * the step fails with the held failure.
   */
  holdRankFailure?(): number;
  /** After a failure, how long to wait for the remaining ranks to report before giving up on them. */
  killWaitMs?: number;
  /**
   * A rank's non-zero exit is reported but kills no other rank (srun's default); the step's exit
   * code is then the highest of its ranks'. Without it, the first failure kills every rank (mpiexec's).
   */
  keepGoing?: boolean;
  /**
   * Say the ranks' ends in Slurm's srun's words (srun-words.ts), and end a rank its node could not
   * start as srun's task ends, with execve's errno as its exit code, the step going on.
   */
  srun?: boolean;
  /** The step's CFG merged over the whole tree: at most once per sampling interval, and when final. */
  onCfg?(report: SubtreeReport): void;
  /** What the ranks StepSpec.stdin names read, sent once every rank runs. */
  stdin?: ReadableStream<Uint8Array>;
}

export class StepRoot {
  readonly key: string;
  private readonly size: number;
  private readonly exits = new Map<number, RankExit>();
  /** With srun: the exit code of each rank its node could not start (execve's errno). */
  private readonly execFailed = new Map<number, number>();
  /** With srun and keepGoing: ranks' bad ends not said yet, said together at the end of the turn they came in (as srun joins a node's). */
  private readonly srunEnds = new SrunEnds();
  private srunEndsDue = false;
  private readonly conns: PeerConn[] = [];
  private readonly unsubscribe: Array<() => void> = [];
  private launched = 0;
  private readonly rankBase: number;
  private readonly adaptReduce: AdaptReductions;
  /** The last level of the distributed CFG reduction: the root has no ranks of its own. */
  private readonly cfgTree: SubtreeCfg;
  private cfgSentAt = Number.NEGATIVE_INFINITY;
  private cfgFinalSent = false;
  /** A report went to onCfg: later ones go too, even empty (they replace it). */
  private cfgReported = false;
  private readonly fences = new Map<number, { count: number; merged: FenceMerge }>();
  /** Everything put in the step's KVS, over all fences; a fence that would take it past a cap fails instead (every agent holds it). */
  readonly kvs = new CountedKvs();
  private failure: string | undefined;
  private lostNode: string | undefined;
  /** The exit code the step ends with: that of its first failure. */
  private failCode = 0;
  /** With keepGoing: the highest exit code of its ranks so far. */
  private highest = 0;
  private resolve!: (r: StepResult) => void;
  private giveUp: ReturnType<typeof setTimeout> | undefined;
  /** A rank's failure held for a node loss that would explain it (holdRankFailure): the step does not end meanwhile. */
  private held: ReturnType<typeof setTimeout> | undefined;
  private over = false;
  /** An exit code that ends a rank cleanly: a checkpoint-restart world's ranks exit so once their part is written. */
  private cleanExit: number | undefined;
  /** Nodes whose agent reported their ranks dead: it lives, and still relays for the nodes below it. */
  private readonly relaying = new Set<string>();
  /** Adoptions under way (children of a lost inner node being re-attached here). */
  private readonly adopting = new Set<Promise<void>>();
  /** The standard input's feed, and the edges that lead to its readers. */
  private readonly feed: StdinFeed | undefined;
  private readonly feedConns: PeerConn[] = [];
  /** The node indices holding a rank that reads the standard input (none without a feed). */
  private readonly readers: number[];
  private nodeIndex: Map<string, number> | undefined;
  private readonly outputAcks: OutputAcks;
  readonly result: Promise<StepResult>;

  constructor(private readonly o: StepRootOptions) {
    this.key = stepKey(o.spec.jobId, o.spec.stepId);
    this.size = o.spec.tasks.reduce((a, b) => a + b, 0);
    this.rankBase = o.spec.elastic?.rankBase ?? 0;
    this.result = new Promise((r) => (this.resolve = r));
    this.outputAcks = new OutputAcks(this.key, () => o.sink.drained?.());
    this.adaptReduce = new AdaptReductions(childrenOf(ROOT, o.spec.nodes.length, o.spec.fanout), (r) => this.o.onAdapt?.(r));
    this.cfgTree = new SubtreeCfg(childrenOf(ROOT, o.spec.nodes.length, o.spec.fanout), false);
    const ranks = o.spec.distribution ? ranksByNode(o.spec.tasks, o.spec.distribution) : undefined;
    const readers = (this.readers = o.stdin ? readerNodes(o.spec.tasks, o.spec.stdin, ranks) : []);
    if (readers.length > 0) {
      const first = ranks ? undefined : firstRanks(o.spec.tasks);
      const all = (n: number) => ranks?.[n] ?? Array.from({ length: o.spec.tasks[n]! }, (_, i) => first![n]! + i);
      const ranksOf = (n: number) => (o.spec.stdin === "all" ? all(n) : [o.spec.stdin as number]);
      this.feed = new StdinFeed(this.key, new Map(readers.map((n) => [n, ranksOf(n)])), (m) => {
        for (const c of this.feedConns) c.send(m);
      });
    }
  }

  /** Whether the subtree of node `index` holds a rank that reads the standard input. */
  private leadsToReaders(index: number): boolean {
    return this.readers.some((r) => below(r, index, this.o.spec.fanout));
  }

  private indexOf(node: string): number {
    this.nodeIndex ??= new Map(this.o.spec.nodes.map((n, i) => [n.name, i]));
    return this.nodeIndex.get(node) ?? -1;
  }

  start(): Promise<StepResult> {
    const { spec } = this.o;
    mark("l.launch-sent");
    if (this.size === 0) this.end();
    for (const c of childrenOf(ROOT, spec.nodes.length, spec.fanout)) {
      const ref = spec.nodes[c]!;
      const conn = this.o.connect(ref.addr);
      this.conns.push(conn);
      if (this.feed && this.leadsToReaders(c)) this.feedConns.push(conn);
      this.unsubscribe.push(
        conn.subscribe(this.key, {
          onUp: (m) => this.onUp(m, c, conn),
          onLost: (reason) => {
            this.cfgTree.childLost(c);
            this.forwardCfg();
            this.nodeLost(ref.name, reason);
          },
        }),
      );
      conn.send({ t: "launch", step: this.key, cred: this.o.cred, spec });
    }
    return this.result;
  }

  broadcast(msg: StepDown): void {
    for (const c of this.conns) c.send(msg);
    // An adaptation's reductions are over once it is done (as on every agent).
    if (msg.t === "adapt.done") this.adaptReduce.clear();
  }

  signal(signal: "SIGTERM" | "SIGKILL" | "SIGINT"): void {
    this.broadcast({ t: "signal", step: this.key, signal });
  }

  /** From now on a rank that exits with `code` ends cleanly (its checkpoint-restart adaptation expects it). */
  expectExit(code: number): void {
    this.cleanExit = code;
  }

  /** Stop the step on request (Ctrl-C, cancel). */
  cancel(reason: string, code = 130): void {
    this.fail(reason, code);
  }

  /** The root has no ranks of its own: its part of each reduction is neutral (0). */
  private adapt(child: number, r: AdaptReport): void {
    this.adaptReduce.local(r.kind, r.adaptId, r.round, 0);
    this.adaptReduce.child(child, r);
  }

  private onUp(msg: StepUp, child: number, via: PeerConn): void {
    const report = adaptReportOf(msg);
    if (report) return this.adapt(child, report);
    switch (msg.t) {
      case "cfg":
        this.cfgTree.child(child, msg);
        this.forwardCfg();
        return;
      case "launched":
        this.launched += msg.count;
        if (this.launched === this.o.spec.nodes.length) {
          mark("l.launched");
          this.o.onLaunched?.();
          if (this.feed && !this.over) void this.feed.run(this.o.stdin!);
        }
        return;
      case "io":
        this.o.sink.io(this.rankBase + msg.rank, msg.fd, msg.data);
        this.outputAcks.written(msg.data.length, via);
        return;
      case "stdin.ack":
        this.feed?.acked(this.indexOf(msg.node), msg.seq);
        return;
      case "exit": {
        if (this.exits.has(msg.rank)) return;
        const code = this.execFailed.get(msg.rank) ?? msg.code;
        const exit = { rank: msg.rank, node: msg.node, code, signal: msg.signal };
        this.exits.set(msg.rank, exit);
        this.o.onExit?.(exit);
        this.feed?.rankGone(this.indexOf(msg.node), msg.rank);
        const rank = this.rankBase + msg.rank;
        if (code !== 0 && !(code === this.cleanExit && !msg.signal)) {
          const end = { node: msg.node, rank, code, signal: msg.signal, oom: msg.oom };
          const what = this.o.srun
            ? srunTaskEnd(end)
            : msg.oom
              ? `rank ${rank} on ${msg.node} was killed by ${msg.signal}: out of memory, past the job's memory limit (ask for more with --mem or --mem-per-cpu)`
              : msg.signal
                ? `rank ${rank} on ${msg.node} was killed by ${msg.signal}`
                : `rank ${rank} on ${msg.node} exited with code ${code}`;
          if (!this.o.keepGoing) this.rankFailed(what, code);
          else if (!this.over) {
            if (this.o.srun) this.sayEndLater(end);
            else this.o.sink.notice(what);
            this.highest = Math.max(this.highest, code);
          }
        }
        if (this.exits.size === this.size) this.end();
        return;
      }
      case "error":
        if (msg.kind === "lost-node") return this.nodeLost(msg.node, msg.message, msg.code);
        if (msg.kind === "ranks-lost") return this.ranksLost(msg.node, msg.message, msg.code);
        if (msg.kind === "abort") return this.rankFailed(msg.message, msg.code ?? 1);
        if (msg.kind === "launch" && msg.rank !== undefined && this.o.srun) {
          // As slurmstepd's execve() error, on the task's standard error; the rank's exit (which follows) carries the errno.
          const prefix = `${msg.node}: rank ${msg.rank}: `;
          this.o.sink.io(this.rankBase + msg.rank, 2, slurmstepdExecLine(msg.node, msg.message.startsWith(prefix) ? msg.message.slice(prefix.length) : msg.message));
          this.execFailed.set(msg.rank, srunExecCode(msg.code ?? 127));
          return;
        }
        this.fail(msg.message, msg.code ?? 1);
        return;
      case "fence.in": {
        let f = this.fences.get(msg.seq);
        if (!f) this.fences.set(msg.seq, (f = { count: 0, merged: new FenceMerge() }));
        f.count += msg.count;
        f.merged.add(msg.kvs, msg.error);
        if (f.count >= this.size) {
          this.fences.delete(msg.seq);
          const { kvs } = f.merged;
          const error = f.merged.error ?? kvsCapExceeded(this.kvs.sizeWithAll(kvs));
          if (error) return this.broadcast({ t: "fence.out", step: this.key, seq: msg.seq, kvs: {}, error });
          for (const [k, v] of Object.entries(kvs)) this.kvs.set(k, v);
          const seq = msg.seq;
          sendPieces(
            kvsPieces(kvs),
            (piece, last) => this.broadcast({ t: "fence.out", step: this.key, seq, kvs: piece, ...(last ? {} : { more: true as const }) }),
            () => !this.over,
          );
        }
        return;
      }
      case "spawn": {
        const answer = (o: SpawnOutcome) => this.broadcast({ t: "spawn.result", step: this.key, node: msg.node, reqId: msg.reqId, ...o });
        if (!this.o.onSpawn) return answer({ rc: -1, message: "spawn is not available for this step" });
        this.o.onSpawn(msg.request, { rank: msg.rank, node: msg.node }).then(answer, (e: Error) => answer({ rc: -1, message: e.message }));
        return;
      }
    }
  }

  /** As on every agent: at once when final, else at most once per sampling interval. */
  private forwardCfg(): void {
    const { spec } = this.o;
    if (!this.o.onCfg || this.cfgFinalSent || !this.cfgTree.dirty) return;
    const now = Date.now();
    if (!this.cfgTree.complete && now - this.cfgSentAt < (spec.sampleInterval ?? spec.elastic?.sampleInterval ?? 60) * 900) return;
    const r = this.cfgTree.merged();
    if (!r) return;
    this.cfgSentAt = now;
    if (r.final) this.cfgFinalSent = true;
    // A step whose ranks wrote no table (a program that is neither MPI nor ebb/comm: `true`, a
    // shell) has nothing to say: no report, so a command job rooted in its agent opens no
    // connection to the controller at all for it (one WebSocket per null job before).
    if (!this.cfgReported && r.cfg.loops.length === 0 && r.monitor === undefined) return;
    this.cfgReported = true;
    this.o.onCfg(r);
  }

  /**
   * The controller took `name` out of the job (a fault adaptation): its ranks count as gone, and
   * whatever it still reports about them (their kill) is not a failure of the step.
   */
  dropNode(name: string): void {
    const index = this.o.spec.nodes.findIndex((n) => n.name === name);
    if (index < 0 || this.over) return;
    // A node whose ranks died but whose agent lives still reports (a commit of 0, and those of the
    // nodes below it): its reductions are still waited for.
    if (!this.relaying.has(name)) {
      this.adaptReduce.childLost(index);
      this.cfgTree.childLost(index);
      this.forwardCfg();
    }
    // Its own ranks: a lost node is a leaf (nodeLost), and a node whose ranks died still relays.
    this.markLost(name, false);
  }

  /** A node is gone: an elastic step may go on without it (a fault adaptation); any other fails. */
  private nodeLost(name: string, reason: string, code = 1): void {
    if (this.over) return;
    const { spec } = this.o;
    const index = spec.nodes.findIndex((n) => n.name === name);
    const orphans = index >= 0 ? childrenOf(index, spec.nodes.length, spec.fanout) : [];
    // An inner node's children lose their parent but not their ranks: the root adopts them (they
    // wait for it), so only the lost node's own ranks are gone.
    if (!this.failure && index >= 0 && orphans.length > 0 && this.o.adoptCredential && this.o.onNodeLost?.(name, reason) === true) {
      const names = orphans.map((i) => spec.nodes[i]!.name);
      this.o.sink.notice(`lost node ${name}: ${reason}; the step goes on without it, adopting ${names.join(",")} below it in the launch tree`);
      this.adaptReduce.childLost(index);
      this.markLost(name, false);
      this.adopt(orphans);
      return;
    }
    // Without adoption the nodes below are cut off: their agents, losing their parent, kill their
    // ranks (StepNode.upstreamLost), so they are lost with it, each reported as a fault.
    const below: string[] = [];
    for (let i = 0, level = index >= 0 ? [index] : []; i < level.length; i++) {
      const kids = childrenOf(level[i]!, spec.nodes.length, spec.fanout);
      level.push(...kids);
      below.push(...kids.map((k) => spec.nodes[k]!.name));
    }
    const goesOn = () =>
      this.o.onNodeLost?.(name, reason) === true && below.every((n) => this.o.onNodeLost?.(n, `cut off from the launch tree by the loss of ${name}`) === true);
    if (!this.failure && index >= 0 && goesOn()) {
      this.o.sink.notice(`lost node ${name}: ${reason}; the step goes on without it${below.length ? ` and without ${below.join(",")} below it in the launch tree` : ""}`);
      this.adaptReduce.childLost(index);
      return this.markLost(name);
    }
    this.fail(reason.startsWith("lost node") ? reason : `lost node ${name}: ${reason}`, code, name);
  }

  /** Resolves once no adoption is under way (a fault window waits for it: adopted nodes take part). */
  async adoptionsSettled(): Promise<void> {
    while (this.adopting.size > 0) await Promise.all([...this.adopting]);
  }

  /**
   * Re-attach `orphans` (node indices, children of a lost node) as the root's children: a credential
   * from the controller, then `adopt` on a connection to each; `adopted` makes it a child. One that
   * cannot be adopted is lost with its subtree (its agent kills its ranks when it gives up waiting).
   */
  private adopt(orphans: number[]): void {
    const { spec } = this.o;
    const names = orphans.map((i) => spec.nodes[i]!.name);
    const credential = this.o.adoptCredential!(names);
    for (const i of orphans) {
      const ref = spec.nodes[i]!;
      const attempt = credential
        .then((cred) => this.adoptOne(i, cred))
        .catch((e: Error) => {
          if (this.over) return;
          this.o.sink.notice(`could not adopt ${ref.name}: ${e.message}`);
          this.nodeLost(ref.name, `cut off from the launch tree and not adopted (${e.message})`);
        });
      this.adopting.add(attempt);
      void attempt.finally(() => this.adopting.delete(attempt));
    }
  }

  private adoptOne(index: number, cred: AdoptCredential): Promise<void> {
    const ref = this.o.spec.nodes[index]!;
    const conn = this.o.connect(ref.addr);
    return new Promise<void>((resolve, reject) => {
      let adopted = false;
      const timer = setTimeout(() => reject(new Error(`no answer within ${ADOPT_ANSWER_MS / 1000} s`)), ADOPT_ANSWER_MS);
      const unsubscribe = conn.subscribe(this.key, {
        onUp: (m) => {
          if (adopted) return this.onUp(m, index, conn);
          if (m.t === "adopted") {
            adopted = true;
            clearTimeout(timer);
            this.conns.push(conn);
            if (this.feed && this.leadsToReaders(index)) this.feedConns.push(conn);
            this.adaptReduce.adopt(index);
            this.cfgTree.adopt(index);
            return resolve();
          }
          if (m.t === "error" && m.kind === "adopt") {
            clearTimeout(timer);
            unsubscribe();
            return reject(new Error(m.message));
          }
        },
        onLost: (reason) => {
          clearTimeout(timer);
          if (!adopted) return reject(new Error(reason));
          this.cfgTree.childLost(index);
          this.forwardCfg();
          this.nodeLost(ref.name, reason);
        },
      });
      this.unsubscribe.push(unsubscribe);
      conn.send({ t: "adopt", step: this.key, cred });
    });
  }

  /**
   * The agent of `name` reports its ranks of this (elastic) step dead while it lives: as a lost
   * node for the step, but its agent still relays for the nodes below it, so only its own ranks
   * are gone (any node of the tree qualifies, not only a leaf).
   */
  private ranksLost(name: string, reason: string, code = 137): void {
    if (this.over) return;
    if (!this.failure && this.o.onNodeLost?.(name, reason)) {
      this.relaying.add(name);
      this.o.sink.notice(`${reason}; the step goes on without them`);
      return this.markLost(name, false);
    }
    this.fail(reason, code);
  }

  /** A rank failed: the step fails, at once or after the grace holdRankFailure gives (the first failure held is the one kept). */
  private rankFailed(reason: string, code: number): void {
    if (this.over || this.failure || this.held) return;
    const ms = this.o.holdRankFailure?.() ?? 0;
    if (ms <= 0) return this.fail(reason, code);
    this.o.sink.notice(`${reason}; waiting up to ${Math.ceil(ms / 1000)} s for a node loss that explains it`);
    this.held = setTimeout(() => {
      this.held = undefined;
      this.fail(reason, code);
    }, ms);
  }

  /** The first failure kills every rank; ranks on a lost node are counted as killed. */
  private fail(reason: string, code: number, lostNode?: string): void {
    if (this.over) return;
    if (this.held) clearTimeout(this.held);
    this.held = undefined;
    if (lostNode) {
      this.lostNode ??= lostNode;
      this.markLost(lostNode);
    }
    if (this.failure) return;
    this.failure = reason;
    this.failCode = code || 1;
    this.o.sink.notice(reason);
    this.signal("SIGKILL");
    this.giveUp = setTimeout(() => this.end(), this.o.killWaitMs ?? 5000);
    if (this.exits.size === this.size) this.end();
  }

  /** `subtree`: the node's agent is gone, so its whole subtree can no longer report. */
  private markLost(name: string, subtree = true): void {
    const { spec } = this.o;
    const index = spec.nodes.findIndex((n) => n.name === name);
    if (index < 0) return;
    const lost = [index];
    for (let i = 0; subtree && i < lost.length; i++) lost.push(...childrenOf(lost[i]!, spec.nodes.length, spec.fanout));
    const ranks = ranksByNode(spec.tasks, spec.distribution);
    for (const n of lost) {
      for (const r of ranks[n]!) {
        if (this.exits.has(r)) continue;
        const exit = { rank: r, node: spec.nodes[n]!.name, code: 137, signal: "SIGKILL" };
        this.exits.set(r, exit);
        this.o.onExit?.(exit);
        this.feed?.rankGone(n, r);
      }
    }
    if (this.exits.size === this.size) this.end();
  }

  /** A rank's bad end in srun's words, said with the others that come in the same turn. */
  private sayEndLater(end: TaskEnd): void {
    this.srunEnds.add(end);
    if (this.srunEndsDue) return;
    this.srunEndsDue = true;
    setImmediate(() => this.sayEnds());
  }

  private sayEnds(): void {
    this.srunEndsDue = false;
    for (const line of this.srunEnds.flush()) this.o.sink.notice(line);
  }

  private end(): void {
    if (this.over || this.held) return;
    this.sayEnds();
    this.over = true;
    this.feed?.stop();
    if (this.giveUp) clearTimeout(this.giveUp);
    this.broadcast({ t: "end", step: this.key });
    for (const u of this.unsubscribe) u();
    const exits = [...this.exits.values()].sort((a, b) => a.rank - b.rank);
    this.resolve({ exitCode: this.failCode || this.highest, exits, failure: this.failure, lostNode: this.lostNode });
  }
}
