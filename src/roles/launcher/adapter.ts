/**
 * The launcher's side of resizing a running elastic step (docs/adaptation.md §7 specifies the rounds):
 *
 *   1 realloc from the controller     -> the plan's remap: staying, leaving, joining ranks
 *   2 grow: start the joining ranks   -> a new step on the added nodes, old world's cards pre-put
 *   3 joining ranks wait in begin     -> their arrival (round 0) comes up their tree
 *   4 tell the preexisting ranks      -> rounds of count / target / (release | arrived), then go
 *   5 every rank commits              -> committed counts up every tree, then done down them
 *   6 report to the controller        -> after leaving ranks have exited, with each step's time
 *
 * The world is a stack of steps: the one `ebb run` started, then one per grow. Ranks are numbered
 * across them in order; a shrink removes the highest ranks, so whole nodes at the end.
 *
 * Faults (dissertation §6.1.2; docs/adaptation.md §7.4-7.9): the controller answers this launcher's
 * `fault` with a fault realloc; the window opens without probe rounds, naming the lost ranks.
 *
 * Checkpoint-restart worlds (libebb programs; docs/adaptation.md §12, helpers in restart.ts) resize
 * by the same rounds up to the window; there every rank writes its part and commits, the old step
 * ends, and the world restarts in a new step on the new nodes, which reads the checkpoint back. A
 * node lost ends the world at once; it restarts on the survivors from its last periodic checkpoint.
 * A node a resize added, lost, ends nothing: the old world goes on, or restarts on its nodes from
 * that resize's checkpoint if its ranks already ended for it (§12.3).
 */
import { mark } from "../../util/trace.ts";
import { cardKey, CR } from "../../proto/adapt.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { NodeRef, StepCredential } from "../../proto/common.ts";
import type { StepDown, StepSpec } from "../../proto/step.ts";
import { firstRanks } from "../../sched/layout.ts";
import type { Placement } from "../../sched/remap.ts";
import type { ControllerLink, ReallocMsg } from "./controller-link.ts";
import { logger } from "../../util/log.ts";
import type { AdaptReport } from "../../tbon/adapt-reduce.ts";
import type { RankExit, StepResult, StepRoot } from "./step-root.ts";
import { isCheckpointRestart, latestCheckpoint, removeIncompletePeriodic, restartFailure, restartSpec } from "./restart.ts";

const log = logger("launcher");

export interface WorldStep {
  spec: StepSpec;
  root: StepRoot;
}

export interface AdapterHost {
  /** Start a step of this launch (the joining ranks, or a restarted world) and resolve once all its ranks run. */
  startJoining(spec: StepSpec, cred: StepCredential): { root: StepRoot; launched: Promise<void>; done: Promise<StepResult> };
  /** Stop a step whose adaptation was aborted (or a checkpoint-restart world a node of which was lost), without failing the launch. */
  abandon(root: StepRoot, why: string): void;
  /** A line about the launch for the user. */
  notice(text: string): void;
  /** Where the job's checkpoints live (restart.ts checkpointDir). */
  checkpointDir: string;
  /** How long a failing rank of a checkpoint-restart world is held for a node loss (restart.ts rankFailureGrace). */
  rankFailureGraceMs: number;
}

/** A resize under way: aborted by a fault, or by its joining step's failure, until its commit is agreed. */
interface Resize {
  adaptId: number;
  committed: boolean;
  aborted: string | undefined;
  /** Aborted by a fault: the fault window that follows takes the ranks held at a target. */
  faulted?: boolean;
  abort(why: string, fault?: boolean): void;
  /** A grow's joining step (a restarted world's step), until the commit makes it part of the world. */
  joining?: StepRoot;
  /** The nodes the resize adds (a grow's, a swap's). */
  added?: ReadonlySet<string>;
  /** Checkpoint-restart: the old world ended; the adaptation can only go on in the restarted step. */
  restarting?: boolean;
  /** Checkpoint-restart: the write window is open; its ranks write their parts and will commit. */
  writing?: boolean;
  /**
   * Checkpoint-restart: a node this resize added was lost after its write window opened; the fault
   * adaptation that removes nothing restarts the world from this resize's checkpoint on the old
   * nodes, not this resize (docs/adaptation.md §12.3).
   */
  handedOver?: boolean;
}

type Waiter = { need: number; values: number[]; resolve: (v: number[]) => void };

/** How long a fault window waits for other nodes lost with the first before it opens. */
const FAULT_SETTLE_MS = 250;
/** A fault window superseded by another failure is replaced by one with id adaptId + k * this (ids of windows, not of adaptations). */
const WINDOW_ID_STRIDE = 1_000_000;
/** First value a margin rounds on: how far ahead of the fastest rank the target is set. */
const FIRST_MARGIN = 2;
/** The most a margin set from the ranks' pace may be (a racer doubles it past that). */
const MAX_PACED_MARGIN = 1 << 20;

/** The fastest preexisting rank's probe count, and when the launcher had it (performance.now()). */
interface Count {
  max: number;
  at: number;
}

/**
 * The margin that keeps every rank short of the target while the target goes round: the ranks'
 * pace (probe calls per ms, between two counts) times twice the count round's round trip (the
 * target travels as long after the agents read the counts), plus one; never below FIRST_MARGIN.
 */
export function pacedMargin(earlier: Count, later: Count, roundTripMs: number): number {
  const ms = later.at - earlier.at;
  if (!(ms > 0) || later.max <= earlier.max) return FIRST_MARGIN;
  const pace = (later.max - earlier.max) / ms;
  return Math.min(MAX_PACED_MARGIN, Math.max(FIRST_MARGIN, Math.ceil(pace * 2 * Math.max(roundTripMs, 0)) + 1));
}

/**
 * `p`, or a rejection at `deadline` (ms since the epoch, the realloc's): every wait of an
 * adaptation is bounded by it (docs/adaptation.md §9).
 */
function within<T>(p: Promise<T>, deadline: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} by the adaptation's deadline (ebb controller --adapt-timeout)`)), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** An order that comes after its deadline (this launcher was stopped, or cut off) fails before it touches a rank. */
function lateOrder(msg: ReallocMsg): void {
  const late = Date.now() - msg.deadline;
  if (late >= 0) throw new Error(`the order came ${(late / 1000).toFixed(1)} s after the adaptation's deadline (ebb controller --adapt-timeout)`);
}

export class Adapter {
  private generation = 0;
  /** The highest generation any window used (an aborted one's is not reused: its context ids may linger). */
  private usedGeneration = 0;
  /** The open fault window: another node lost now supersedes it. */
  private faultWindow: { supersede(): void } | undefined;
  /** The resize under way, if one is. */
  private resize: Resize | undefined;
  /** Nodes of the new world lost after a resize's commit was agreed: reported once the controller has its end. */
  private deferredFaults: Array<{ node: string; reason: string }> = [];
  /** The world's nodes in rank order, each with its ranks, the step that runs them and its first rank in that step. */
  private world: Array<{ node: string; tasks: number; first: number; step: WorldStep }>;
  /** Nodes lost and not yet adapted past. */
  private readonly lost = new Set<string>();
  private adapting = false;
  /** A fault realloc came and its window is not open yet: more lost nodes join it. */
  private settling = false;
  /** Business cards of the world's ranks, once known. */
  private worldCards: string[] | undefined;
  private readonly waiters = new Map<string, Waiter>();
  private readonly exitWaiters = new Set<() => void>();
  /** Processes that exited, as "step:rank in step" (world ranks are reused across worlds). */
  private readonly exited = new Set<string>();
  private busy: Promise<void> | undefined;
  private failure: string | undefined;
  /** Fault adaptations ordered and not ended: a realloc naming one again extends it. */
  private readonly faults = new Set<number>();
  /** Checkpoint-restart: the steps the world goes on in, in order, each once its predecessor ended on purpose. */
  private readonly successors: Array<Promise<StepResult>> = [];
  /** Resolves the newest of `successors`: the restarted step's end, or the restart's failure. */
  private restarting: ((r: StepResult | Promise<StepResult>) => void) | undefined;
  /** The checkpoint-restart world stopped after a node was lost (its step is being killed). */
  private stopped: StepRoot | undefined;
  /** Steps this launcher restarted a checkpoint-restart world in (their ranks put no flag: restart.ts). */
  private readonly restartRoots = new WeakSet<StepRoot>();
  /** The checkpoint a resize handed over wrote, its old ranks ended: the fault adaptation restarts from it (§12.3). */
  private resumable: { from: string; shmNodes: readonly string[] } | undefined;

  /** Whether the world is a checkpoint-restart world: its ranks said so, or it restarted as one. */
  private restarts(): boolean {
    const root = this.world[0]!.step.root;
    return this.restartRoots.has(root) || isCheckpointRestart(root);
  }

  constructor(
    private readonly link: ControllerLink,
    private readonly host: AdapterHost,
    primary: WorldStep,
  ) {
    const first = firstRanks(primary.spec.tasks);
    this.world = primary.spec.nodes.map((n, i) => ({ node: n.name, tasks: primary.spec.tasks[i]!, first: first[i]!, step: primary }));
  }

  /** Reductions from any step of the world. */
  report(r: AdaptReport): void {
    const w = this.waiters.get(`${r.kind}:${r.adaptId}:${r.round}`);
    if (!w) return;
    w.values.push(r.value);
    if (w.values.length === w.need) w.resolve(w.values);
  }

  /** A rank of a step of the world exited. */
  exit(stepSpec: StepSpec, e: RankExit): void {
    this.exited.add(`${stepSpec.stepId}:${e.rank}`);
    for (const f of [...this.exitWaiters]) f();
  }

  /** The process behind each world rank in [from, to), as "step:rank in step". */
  private processes(from: number, to: number): string[] {
    const out: string[] = [];
    let rank = 0;
    for (const w of this.world) {
      for (let k = 0; k < w.tasks; k++, rank++) {
        if (rank >= from && rank < to) out.push(`${w.step.spec.stepId}:${w.first + k}`);
      }
    }
    return out;
  }

  /**
   * The step the world went on in after the step the launch awaited ended on purpose (a
   * checkpoint-restart): its end, or the restart's failure; undefined when the world did not restart.
   */
  nextStep(): Promise<StepResult> | undefined {
    return this.successors.shift();
  }

  /** The world's step is ending for a restart: the launch waits for the step it restarts in. */
  private beginRestart(): void {
    if (this.restarting) return;
    this.successors.push(new Promise<StepResult>((resolve) => (this.restarting = resolve)));
  }

  private endRestart(r: StepResult | Promise<StepResult>): void {
    const resolve = this.restarting;
    this.restarting = undefined;
    resolve?.(r);
  }

  /**
   * A rank of `root` failed: how long to hold it for a node loss that explains it (docs/adaptation.md
   * §12.4): a checkpoint-restart world's step, no restart under way; else 0 (fail at once).
   */
  holdRankFailure(root: StepRoot): number {
    if (this.failure || this.resize?.restarting || this.stopped === root) return 0;
    return this.world[0]!.step.root === root && this.restarts() ? this.host.rankFailureGraceMs : 0;
  }

  /** The launch failed: an adaptation in progress fails with it. */
  fail(message: string): void {
    this.endRestart({ exitCode: 1, exits: [], failure: message });
    this.failure ??= message;
    for (const w of this.waiters.values()) w.resolve([]);
    for (const f of [...this.exitWaiters]) f();
  }

  /**
   * A node of the world was lost. True: the controller is told, and the step goes on (its ranks
   * there count as gone); false: the step cannot go on without it (an adaptation is under way).
   */
  nodeLost(node: string, reason: string): boolean {
    if (this.failure) return false;
    // A checkpoint-restart world restarting: a node of the step it restarts in fails the restart,
    // unless the resize added it: the world then restarts on its old nodes (§12.3).
    const restarting = this.resize;
    if (restarting?.restarting && restarting.joining && !restarting.committed) {
      if (!restarting.added?.has(node) || restarting.aborted) return false;
      this.link.fault(node, reason);
      this.addedLost(restarting, `node ${node}, which the resize added, was lost (${reason})`);
      return true;
    }
    // A node the resize under way added, lost before its commit: the resize is aborted as by a
    // fault; the controller's fault adaptation (nothing removed) voids its window (§7.8).
    const growing = this.resize;
    if (growing?.added?.has(node) && !growing.committed && !growing.aborted && !this.restarts()) {
      this.link.fault(node, reason);
      growing.abort(`node ${node}, which the resize added, was lost (${reason}); the resize is aborted`, true);
      return true;
    }
    // Already being adapted past, or it had left the world.
    if (this.lost.has(node) || !this.world.some((w) => w.node === node)) return true;
    if (this.restarts()) return this.restartLost(node, reason);
    // A resize under way: before its commit is agreed it is aborted (the fault realloc that follows
    // works on the world before it); after, the fault is reported once the resize's end is.
    const resize = this.resize;
    if (resize && !resize.aborted) {
      this.lost.add(node);
      if (resize.committed) {
        this.deferredFaults.push({ node, reason });
        return true;
      }
      this.link.fault(node, reason);
      resize.abort(`node ${node} was lost (${reason}); the resize is aborted`, true);
      return true;
    }
    // Once a window is open (a resize's or a fault's) its members are fixed: the step fails. Before
    // that, a second node lost with the first (or before its realloc came) joins the same fault
    // adaptation: the controller extends it, and faultAdapt names every node lost so far.
    // A fault window is open: it is superseded by one that names this node's ranks too (the
    // controller adds the node to the same fault adaptation).
    if (this.adapting && !this.settling && this.faultWindow) {
      this.lost.add(node);
      this.link.fault(node, reason);
      this.faultWindow.supersede();
      return true;
    }
    if (this.adapting && !this.settling) return false;
    this.lost.add(node);
    this.link.fault(node, reason);
    return true;
  }

  realloc(msg: ReallocMsg): void {
    // The controller extends a fault adaptation it ordered (a node went DOWN meanwhile, this
    // launcher saw nothing): its window names that node's ranks too, as if the launcher had lost it.
    if (msg.fault && this.faults.has(msg.adaptId)) {
      for (const n of msg.removed) {
        if (this.lost.has(n) || !this.world.some((w) => w.node === n)) continue;
        log.warn(`fault adaptation ${msg.adaptId}: the controller lost node ${n} too (${msg.fault.reason})`);
        this.lost.add(n);
        this.faultWindow?.supersede();
      }
      return;
    }
    if (msg.fault) this.faults.add(msg.adaptId);
    const restarts = this.restarts();
    // The controller saw the fault first (the node went DOWN): a resize under way is aborted, as
    // when this launcher loses the node itself; a checkpoint-restart world's that lost only a node
    // it added, as §12.3 says.
    if (msg.fault && this.resize && !this.resize.committed) {
      if (restarts && !msg.removed.some((n) => this.world.some((w) => w.node === n))) this.addedLost(this.resize, msg.fault.reason);
      else {
        for (const n of msg.removed) this.lost.add(n);
        this.resize.abort(`${msg.fault.reason}; the resize is aborted`, true);
      }
    }
    const adapt = msg.fault ? () => (restarts ? this.restartAfterFault(msg) : this.faultAdapt(msg)) : () => this.adapt(msg);
    const run = () => {
      this.adapting = true;
      return adapt()
        .catch((e: Error) => {
          // A checkpoint-restart world that ended for this adaptation cannot go on: the launch ends with it.
          this.endRestart({ exitCode: 1, exits: [], failure: e.message });
          this.link.adaptDone(msg.adaptId, false, {}, e.message);
        })
        .finally(() => {
          this.adapting = false;
          this.faults.delete(msg.adaptId);
        });
    };
    this.busy = (this.busy ?? Promise.resolve()).then(run, run);
  }

  /** The world as of the last commit: its nodes in rank order and ranks per node. */
  placement(): Placement {
    return { nodes: this.world.map((w) => w.node), tasks: this.world.map((w) => w.tasks) };
  }

  /** The steps that run the world's ranks. */
  private steps(): WorldStep[] {
    return [...new Set(this.world.map((w) => w.step))];
  }

  /** The world's business cards by rank (at first, what the ranks put in their KVS at initAdapt). */
  private cards(size: number): string[] {
    if (this.worldCards) return this.worldCards;
    const out: string[] = [];
    for (let r = 0; r < size; r++) {
      const card = this.world[0]!.step.root.kvs.get(cardKey(r, 0));
      if (card === undefined) throw new Error(`rank ${r} has no business card: the step's ranks must call initAdapt() (ebb/comm) or ebb_init() (libebb) before they can be resized`);
      out.push(card);
    }
    return out;
  }

  /** A resize (or a restart) under way, and a promise that settles when it is aborted. */
  private newResize(adaptId: number): { resize: Resize; aborted: Promise<string> } {
    let abortNow!: (why: string) => void;
    const aborted = new Promise<string>((r) => (abortNow = r));
    const resize: Resize = {
      adaptId,
      committed: false,
      aborted: undefined,
      abort: (why, fault) => {
        if (resize.committed || resize.aborted) return;
        log.warn(`adaptation ${adaptId}: ${why}`);
        resize.aborted = why;
        resize.faulted = fault;
        abortNow(why);
        for (const w of [...this.waiters.values()]) w.resolve([]);
      },
    };
    return { resize, aborted };
  }

  private async adapt(msg: ReallocMsg): Promise<void> {
    const { resize, aborted } = this.newResize(msg.adaptId);
    this.resize = resize;
    try {
      if (this.restarts()) await this.restartResize(msg, resize, aborted);
      else await this.resizeSteps(msg, resize, aborted);
    } catch (e) {
      // A failed grow fails only the adaptation: its joining ranks, waiting in adaptBegin or still
      // starting, go; the preexisting ranks go on in the old world (or the fault window's).
      if (resize.joining && !resize.committed) this.host.abandon(resize.joining, resize.aborted ?? (e as Error).message);
      for (const key of [...this.waiters.keys()]) if (key.includes(`:${msg.adaptId}:`)) this.waiters.delete(key);
      throw e;
    } finally {
      this.resize = undefined;
      const deferred = this.deferredFaults;
      this.deferredFaults = [];
      for (const f of deferred) this.link.fault(f.node, f.reason);
    }
  }

  /**
   * A step of this launch failed. True when it was the joining step of the resize under way (not
   * committed): the resize fails, not the launch.
   */
  joiningFailed(root: StepRoot, why: string): boolean {
    const resize = this.resize;
    if (!resize || resize.joining !== root || resize.committed) return false;
    resize.abort(`the joining ranks' step failed: ${why}`);
    return true;
  }

  private async resizeSteps(msg: ReallocMsg, resize: Resize, aborted: Promise<string>): Promise<void> {
    const check = () => {
      this.check();
      if (resize.aborted) throw new Error(resize.aborted);
    };
    const times: Record<string, number> = { realloc: Date.now() };
    mark("l.realloc");
    lateOrder(msg);
    resize.added = new Set(msg.added.map((n) => n.name));
    const before = this.placement();
    // The remap the controller's plan made (sched/plan.ts), as it is: nothing recomputes it here.
    if (!msg.remap) throw new Error("the resize order carries no rank remap (a controller older than this launcher?)");
    const m = { ...msg.remap, after: { nodes: msg.nodes.map((n) => n.name), tasks: msg.remap.tasks } };
    const oldSize = m.staying + m.leaving;
    const have = before.tasks.reduce((a, b) => a + b, 0);
    if (oldSize !== have || m.after.tasks.length !== m.after.nodes.length) throw new Error(`the resize order's remap (${oldSize} ranks before, ${m.after.tasks.length} nodes' ranks after) does not fit this world (${have} ranks)`);
    const next = Math.max(this.generation, this.usedGeneration) + 1;
    this.usedGeneration = next;
    const cards = this.cards(oldSize);
    const pre = this.steps();
    const leavingProcesses = this.processes(m.staying, oldSize);
    const worldNodes = m.after.nodes;
    log.debug(`adaptation ${msg.adaptId}: ${before.nodes.length} -> ${msg.nodes.length} nodes`, { staying: m.staying, leaving: m.leaving, joining: m.joining, steps: pre.length });

    // Steps 2-3: joining ranks on the added nodes, waiting in adaptBegin.
    let joinStep: WorldStep | undefined;
    let early: Promise<Count | undefined> | undefined;
    const joiningCards: Record<string, string> = {};
    if (m.joining > 0) {
      if (!msg.join) throw new Error("a grow needs a grant for the joining ranks");
      const preput: Record<string, string> = {};
      cards.forEach((c, r) => {
        preput[cardKey(r, next - 1)] = c;
        if (r < m.staying) preput[cardKey(r, next)] = c;
      });
      const base = this.world[0]!.step.spec;
      const spec: StepSpec = {
        ...base,
        stepId: msg.join.stepId,
        nodes: msg.added as NodeRef[],
        tasks: msg.join.tasks,
        preput,
        elastic: {
          ...base.elastic!,
          status: "joining",
          generation: next,
          // Their ranks in the new world: after the staying ones (a grow: the old size; a swap, §7.10: fewer).
          rankBase: m.staying,
          worldSize: m.staying + m.joining,
          worldNodes,
          window: { adaptId: msg.adaptId },
        },
      };
      const ready = this.wait("arrived", msg.adaptId, 0, 1);
      mark("l.launch");
      const { root, launched } = this.host.startJoining(spec, msg.join.cred);
      // While the joining ranks start, a first count of the preexisting ranks' probe calls: with
      // the agreement's own count it gives their pace, which sets the target's margin (§7.3).
      early = this.count(msg, pre, 1).catch(() => undefined);
      resize.joining = root;
      joinStep = { spec, root };
      await within(Promise.race([launched, aborted]), msg.deadline, `the ${m.joining} joining ranks did not all start`);
      check();
      times.spawned = Date.now();
      mark("l.launched");
      const [arrived] = await within(ready, msg.deadline, `the ${m.joining} joining ranks did not all reach adaptBegin`);
      check();
      if (arrived !== m.joining) throw new Error(this.failure ?? `only ${arrived ?? 0} of ${m.joining} joining ranks reached adaptBegin`);
      times.ready = Date.now();
      for (let r = m.staying; r < m.staying + m.joining; r++) {
        const card = root.kvs.get(cardKey(r, next));
        if (card === undefined) throw new Error(`joining rank ${r} put no business card`);
        joiningCards[cardKey(r, next)] = card;
      }
    }

    // Step 4: bring every preexisting rank to the same probe call.
    times.notified = Date.now();
    mark("l.joining-ready");
    await this.agree(msg, pre, resize, check, oldSize, early);
    times.agreed = Date.now();
    mark("l.agreed");

    // Step 5: the window opens everywhere; it closes when every rank of both worlds committed.
    const all = joinStep ? [...pre, joinStep] : pre;
    const committed = this.wait("committed", msg.adaptId, 0, all.length);
    this.broadcast(all, {
      t: "adapt.go",
      step: "",
      adaptId: msg.adaptId,
      generation: next,
      staying: m.staying,
      leaving: m.leaving,
      joining: m.joining,
      oldSize,
      cards: joiningCards,
    });
    const commits = (await within(committed, msg.deadline, `not every rank committed`)).reduce((a, b) => a + b, 0);
    log.debug(`adaptation ${msg.adaptId}: ${commits} ranks committed`);
    check();
    if (commits !== oldSize + m.joining) throw new Error(`only ${commits} of ${oldSize + m.joining} ranks committed`);
    // Every rank committed: the new world stands; a fault from now on is the new world's.
    resize.committed = true;
    times.committed = Date.now();
    mark("l.committed");
    this.link.adaptCommitted(msg.adaptId);
    this.broadcast(all, { t: "adapt.done", step: "", adaptId: msg.adaptId, generation: next, size: m.staying + m.joining });
    this.generation = next;
    this.worldCards = [...cards.slice(0, m.staying), ...Object.values(joiningCards)];
    this.world = this.world.slice(0, m.after.nodes.length - msg.added.length);
    if (joinStep) {
      const first = firstRanks(msg.join!.tasks);
      msg.added.forEach((n, i) => this.world.push({ node: n.name, tasks: msg.join!.tasks[i]!, first: first[i]!, step: joinStep! }));
    }

    // Step 6: leaving ranks exit, then the controller may hand their nodes to others. The commit
    // stands: at the deadline it is reported all the same, and the controller kills what is left.
    await within(this.until(() => leavingProcesses.every((p) => this.exited.has(p))), msg.deadline, "the leaving ranks did not all exit").catch((e: Error) => log.warn(`adaptation ${msg.adaptId}: ${e.message}`));
    this.check();
    times.released = Date.now();
    this.link.adaptDone(msg.adaptId, true, times, undefined, this.placement().tasks);
  }

  /** A count round (§7.3, 1): the fastest preexisting rank's probe count (-Infinity: the adaptation was aborted meanwhile). */
  private async count(msg: ReallocMsg, pre: readonly WorldStep[], round: number): Promise<Count> {
    const counted = this.wait("counted", msg.adaptId, round, pre.length);
    this.broadcast(pre, { t: "adapt.count", step: "", adaptId: msg.adaptId, round });
    const max = Math.max(...(await within(counted, msg.deadline, `probe round ${round}: not every node reported its ranks' probe count`)));
    return { max, at: performance.now() };
  }

  /**
   * Step 4: rounds of count / target / (release | arrived) over the preexisting steps until every
   * rank waits at the same probe call (docs/adaptation.md §7.3); throws when a round fails.
   * `early`: a count made as round 1 while the joining ranks started; the rounds then start at 2,
   * and the first margin follows the ranks' pace between the two counts.
   */
  private async agree(msg: ReallocMsg, pre: readonly WorldStep[], resize: Resize, check: () => void, oldSize: number, early?: Promise<Count | undefined>): Promise<void> {
    let margin = FIRST_MARGIN;
    for (let round = early ? 2 : 1; ; round++) {
      const sent = performance.now();
      const now = await this.count(msg, pre, round);
      mark("l.counted", round);
      check();
      if (early) {
        // Sent before this round's on the same links, so it is in (or failed) by now.
        const before = await early;
        early = undefined;
        if (before && Number.isFinite(before.max)) margin = pacedMargin(before, now, now.at - sent);
      }
      const target = now.max + margin;
      log.debug(`adaptation ${msg.adaptId} round ${round}: target probe call ${target}`);
      check();
      const checked = this.wait("checked", msg.adaptId, round, pre.length);
      const arrived = this.wait("arrived", msg.adaptId, round, pre.length);
      mark("l.target-sent", `${round} ${target}`);
      this.broadcast(pre, { t: "adapt.target", step: "", adaptId: msg.adaptId, round, target });
      // From here ranks may be held at the target: a round that fails lets them go on (adapt.release),
      // unless a fault aborted it (its window answers them).
      const release = () => this.broadcast(pre, { t: "adapt.release", step: "", adaptId: msg.adaptId, round });
      try {
        const racers = await within(checked, msg.deadline, `probe round ${round}: not every node checked its ranks against probe call ${target}`);
        check();
        if (Math.max(...racers) > 0) {
          // A rank went past the target before it could see it: let everyone go on, aim further.
          this.waiters.delete(`arrived:${msg.adaptId}:${round}`);
          release();
          margin *= 2;
          continue;
        }
        const total = (await within(arrived, msg.deadline, `probe round ${round}: not every rank reached probe call ${target}`)).reduce((a, b) => a + b, 0);
        log.debug(`adaptation ${msg.adaptId} round ${round}: ${total} of ${oldSize} ranks at the target`);
        check();
        if (total !== oldSize) throw new Error(`only ${total} of ${oldSize} ranks reached probe call ${target}`);
      } catch (e) {
        if (!resize.faulted) release();
        throw e;
      }
      break;
    }
  }

  /**
   * A checkpoint-restart world's resize (docs/adaptation.md §12): the probe rounds, then a window
   * in which every rank stays (they all end anyway) and the plan rides as a KVS entry; each rank
   * writes its part, rank 0 says how it went (KVS, one fence) and they commit. On "ok" the window
   * closes, the old ranks exit with CR.exitStatus, and the world restarts on the new nodes.
   * Otherwise the window closes and the ranks go on at their size: the resize fails only itself.
   */
  private async restartResize(msg: ReallocMsg, resize: Resize, aborted: Promise<string>): Promise<void> {
    const check = () => {
      this.check();
      if (resize.aborted) throw new Error(resize.aborted);
    };
    const times: Record<string, number> = { realloc: Date.now() };
    lateOrder(msg);
    if (!msg.remap) throw new Error("the resize order carries no rank remap (a controller older than this launcher?)");
    const m = msg.remap;
    const oldSize = m.staying + m.leaving;
    const have = this.placement().tasks.reduce((a, b) => a + b, 0);
    if (oldSize !== have) throw new Error(`the resize order's remap (${oldSize} ranks before) does not fit this world (${have} ranks)`);
    const step = this.world[0]!.step;
    if (this.world.some((w) => w.step !== step)) throw new Error("a checkpoint-restart world runs in one step");
    resize.added = new Set(msg.added.map((n) => n.name));
    // The nodes whose ranks keep their node write to its /dev/shm: the first ones, holding the staying ranks.
    const shmNodes = this.world.filter((w) => w.first + w.tasks <= m.staying).map((w) => w.node);
    const next = Math.max(this.generation, this.usedGeneration) + 1;
    this.usedGeneration = next;
    times.notified = Date.now();
    await this.agree(msg, [step], resize, check, oldSize);
    times.agreed = Date.now();

    const committed = this.wait("committed", msg.adaptId, 0, 1);
    // From here a node the resize added, lost, no longer aborts it: its outcome decides (§12.3).
    resize.writing = true;
    this.broadcast([step], { t: "adapt.go", step: "", adaptId: msg.adaptId, generation: next, staying: oldSize, leaving: 0, joining: 0, oldSize, cards: { [CR.plan(msg.adaptId)]: `stay=${m.staying}` } });
    const commits = (await within(committed, msg.deadline, "not every rank wrote its part of the checkpoint")).reduce((a, b) => a + b, 0);
    check();
    if (commits !== oldSize) throw new Error(`only ${commits} of ${oldSize} ranks wrote their part of the checkpoint`);
    times.written = Date.now();
    const written = step.root.kvs.get(CR.written(msg.adaptId));
    if (written !== "ok") {
      this.broadcast([step], { t: "adapt.done", step: "", adaptId: msg.adaptId, generation: next, size: oldSize });
      this.generation = next;
      throw new Error(`writing the checkpoint failed, the job goes on at ${oldSize} ranks: ${written ?? "no rank said how it went"}`);
    }
    // From here the old world ends: its ranks exit once the window closes; the launch waits for the restarted step.
    resize.restarting = true;
    step.root.expectExit(CR.exitStatus);
    this.beginRestart();
    this.broadcast([step], { t: "adapt.done", step: "", adaptId: msg.adaptId, generation: next, size: oldSize });
    this.generation = next;
    // The new step's grant is asked for while the old ranks end.
    const grant = this.link.restartGrant(msg.adaptId);
    grant.catch(() => {});
    await within(step.root.result, msg.deadline, "the old ranks did not all end after writing the checkpoint");
    times.exited = Date.now();
    const from = join(this.host.checkpointDir, CR.tag(msg.adaptId));
    // A node the resize added was lost (before or during this restart): the fault adaptation that
    // follows restarts the world from this checkpoint on its old nodes; this resize has failed.
    try {
      if (!resize.handedOver) await this.restartIn(msg, resize, aborted, from, times, shmNodes, grant);
    } catch (e) {
      if (!resize.handedOver) throw e;
    }
    if (resize.handedOver) this.resumable = { from, shmNodes };
  }

  /**
   * A node the checkpoint-restart resize under way added was lost (the controller's fault
   * adaptation removes nothing; docs/adaptation.md §12.3): before its write window the resize is
   * aborted and the old world goes on (a round at a target is released); from the window on the
   * resize's outcome decides, and once the old ranks ended for it the fault adaptation restarts
   * the world from its checkpoint on the old nodes.
   */
  private addedLost(resize: Resize, why: string): void {
    if (!resize.writing && !resize.restarting) return resize.abort(`${why}; the resize is aborted, the world goes on at its size`);
    resize.handedOver = true;
    log.warn(`adaptation ${resize.adaptId}: ${why}; the world restarts on its old nodes from the resize's checkpoint if its ranks ended for it`);
    // Its restart (grant, new step) is given up; a write window still open runs to its outcome.
    if (resize.restarting) resize.abort(`${why}; the world restarts on its old nodes`, true);
  }

  /**
   * The world restarts from checkpoint `from` in the step the controller grants (the adaptation's
   * new nodes): its ranks read the checkpoint and wait in ebb-begin (round 0 of window
   * adaptId + WINDOW_ID_STRIDE), a window opens and closes over them, and it is the world. A
   * failure ends the launch (the old world is gone), saying where the checkpoint is kept.
   */
  private async restartIn(msg: ReallocMsg, resize: Resize, aborted: Promise<string>, from: string, times: Record<string, number>, shmNodes: readonly string[], grant = this.link.restartGrant(msg.adaptId)): Promise<void> {
    const check = () => {
      this.check();
      if (resize.aborted) throw new Error(resize.aborted);
    };
    let size = 0;
    try {
      const g = await within(grant, msg.deadline, "the controller did not grant the step to restart in");
      check();
      size = g.tasks.reduce((a, b) => a + b, 0);
      const windowId = msg.adaptId + WINDOW_ID_STRIDE;
      const next = Math.max(this.generation, this.usedGeneration) + 1;
      this.usedGeneration = next;
      const spec = restartSpec(this.world[0]!.step.spec, g, { dir: this.host.checkpointDir, from, generation: next, windowId });
      const ready = this.wait("arrived", windowId, 0, 1);
      const started = this.host.startJoining(spec, g.cred);
      this.restartRoots.add(started.root);
      const step: WorldStep = { spec, root: started.root };
      resize.joining = started.root;
      await within(Promise.race([started.launched, aborted]), msg.deadline, `the ${size} restarted ranks did not all start`);
      check();
      times.spawned = Date.now();
      const [arrived] = await within(ready, msg.deadline, `the ${size} restarted ranks did not all read the checkpoint`);
      check();
      if (arrived !== size) throw new Error(this.failure ?? `only ${arrived ?? 0} of ${size} restarted ranks read the checkpoint`);
      times.ready = Date.now();
      const committed = this.wait("committed", windowId, 0, 1);
      this.broadcast([step], { t: "adapt.go", step: "", adaptId: windowId, generation: next, staying: 0, leaving: 0, joining: size, oldSize: size, cards: {} });
      const commits = (await within(committed, msg.deadline, "not every restarted rank committed")).reduce((a, b) => a + b, 0);
      check();
      if (commits !== size) throw new Error(`only ${commits} of ${size} restarted ranks committed`);
      resize.committed = true;
      times.committed = times.released = Date.now();
      this.broadcast([step], { t: "adapt.done", step: "", adaptId: windowId, generation: next, size });
      this.generation = next;
      this.worldCards = undefined;
      const first = firstRanks(g.tasks);
      this.world = g.nodes.map((n, i) => ({ node: n.name, tasks: g.tasks[i]!, first: first[i]!, step }));
      this.stopped = undefined;
      this.endRestart(started.done);
      this.link.adaptDone(msg.adaptId, true, times, undefined, g.tasks);
      this.link.elasticStepIs(g.stepId, g.cred);
    } catch (e) {
      // Handed over to a fault adaptation (§12.3): the world restarts there, the launch goes on.
      if (resize.handedOver) {
        if (resize.joining && !resize.committed) this.host.abandon(resize.joining, resize.aborted ?? (e as Error).message);
        throw e;
      }
      const why = restartFailure(resize.aborted ?? (e as Error).message, size || this.placement().tasks.reduce((a, b) => a + b, 0), from, shmNodes);
      if (resize.joining && !resize.committed) this.host.abandon(resize.joining, why);
      this.host.notice(why);
      this.endRestart({ exitCode: 1, exits: [], failure: why });
      throw new Error(why);
    }
  }

  /**
   * A node of a checkpoint-restart world was lost: the world cannot go on (MPI ranks of a broken
   * world), so it ends now, and the controller's fault realloc restarts it on the survivors from
   * the last periodic checkpoint. A node lost while a restart is under way fails the restart.
   */
  private restartLost(node: string, reason: string): boolean {
    if (this.resize?.restarting) return false;
    this.lost.add(node);
    this.link.fault(node, reason);
    this.resize?.abort(`node ${node} was lost (${reason}); the resize is aborted`, true);
    this.stopWorld(`lost node ${node} (${reason}): the job restarts from its last checkpoint`);
    return true;
  }

  /** Kills the checkpoint-restart world's step without failing the launch: a restart follows. */
  private stopWorld(why: string): void {
    const root = this.world[0]!.step.root;
    if (this.stopped === root) return;
    this.stopped = root;
    this.beginRestart();
    this.host.abandon(root, why);
  }

  /**
   * The fault realloc of a checkpoint-restart world: once its step has ended, it restarts on the
   * survivors from the newest periodic checkpoint; without one the fault adaptation fails (the
   * job ends NODE_FAIL).
   */
  private async restartAfterFault(msg: ReallocMsg): Promise<void> {
    const times: Record<string, number> = { realloc: Date.now() };
    lateOrder(msg);
    for (const n of msg.removed) this.lost.add(n);
    const root = this.world[0]!.step.root;
    // Only a node a resize added was lost (§12.3): none of the world's ranks is gone.
    const worldLost = this.stopped === root || this.world.some((w) => this.lost.has(w.node));
    const resume = worldLost ? undefined : this.resumable;
    this.resumable = undefined;
    if (!worldLost && !resume) {
      // The world still runs: nothing to restart.
      times.committed = times.released = Date.now();
      this.link.adaptDone(msg.adaptId, true, times, undefined, this.placement().tasks);
      return;
    }
    // Its ranks ended for that resize (the launch awaits the step the world restarts in): from its checkpoint.
    if (!resume) this.stopWorld(`${msg.fault?.reason ?? "a node failed"}: the job restarts from its last checkpoint`);
    const { resize, aborted } = this.newResize(msg.adaptId);
    this.resize = resize;
    try {
      resize.restarting = true;
      await within(root.result, msg.deadline, "the ranks of the failed world did not all end");
      times.exited = times.notified = times.agreed = Date.now();
      removeIncompletePeriodic(this.host.checkpointDir);
      // The resize's checkpoint, unless its restarted ranks had read it all (and removed it).
      const latest = resume && existsSync(join(resume.from, "manifest")) ? { path: resume.from } : latestCheckpoint(this.host.checkpointDir);
      if ("reason" in latest) {
        const why = `nothing to restart from: ${latest.reason}`;
        this.endRestart({ exitCode: 1, exits: [], failure: why });
        throw new Error(why);
      }
      const cause = msg.fault?.reason ?? "a node failed";
      if (latest.path === resume?.from) this.host.notice(`${cause}: the world restarts on its nodes from the resize's checkpoint ${resume.from}`);
      else if (resume) this.host.notice(`${cause}: the resize's checkpoint ${resume.from} was read and removed; the world restarts on its nodes from its last periodic checkpoint ${latest.path}`);
      await this.restartIn(msg, resize, aborted, latest.path, times, latest.path === resume?.from ? resume.shmNodes : []);
      for (const n of msg.removed) this.lost.delete(n);
    } finally {
      this.resize = undefined;
    }
  }

  /**
   * A fault window: the ranks on the removed nodes are dead. No probe rounds (the survivors wait
   * in probeAdapt, having seen their world fail): the window opens at once, naming the lost ranks;
   * the survivors, renumbered in order, commit; the controller is told.
   */
  private async faultAdapt(msg: ReallocMsg): Promise<void> {
    const times: Record<string, number> = { realloc: Date.now() };
    lateOrder(msg);
    for (let attempt = 0; ; attempt++) {
      // Nodes that die together are not seen at the same instant (each tree link closes when its
      // agent is gone): losses in the next moment still join this window.
      this.settling = true;
      await Bun.sleep(FAULT_SETTLE_MS);
      // The children of a lost inner node are being re-attached to their step's root: they take part
      // in the window (or, not adopted, are lost with it: they join it as more lost nodes).
      await Promise.all(this.steps().map((s) => s.root.adoptionsSettled()));
      this.settling = false;
      this.check();
      const oldSize = this.world.reduce((a, w) => a + w.tasks, 0);
      const cards = this.cards(oldSize);
      // The nodes of the realloc and any lost since (reported to the controller, which extended it).
      const removed = [...new Set([...msg.removed, ...[...this.lost].filter((n) => this.world.some((w) => w.node === n))])];
      const lostRanks: number[] = [];
      let rank = 0;
      for (const w of this.world) {
        for (let k = 0; k < w.tasks; k++, rank++) if (removed.includes(w.node)) lostRanks.push(rank);
      }
      const survivors = this.world.filter((w) => !removed.includes(w.node));
      // The controller may have seen the failure first (the node went DOWN): its ranks are gone either way.
      for (const n of removed) {
        this.lost.add(n);
        for (const w of this.world) if (w.node === n) w.step.root.dropNode(n);
      }
      const size = oldSize - lostRanks.length;
      if (size === 0) throw new Error("no rank survived");
      const steps = [...new Set(survivors.map((w) => w.step))];
      const next = Math.max(this.generation, this.usedGeneration) + 1;
      this.usedGeneration = next;
      // A superseded window's id is not reused (agents and ranks key windows and reductions by it).
      const windowId = msg.adaptId + attempt * WINDOW_ID_STRIDE;
      log.info(`fault adaptation ${msg.adaptId}${attempt ? ` (window ${attempt + 1})` : ""}: lost ${removed.join(",")} (ranks ${lostRanks.join(",")}); ${size} of ${oldSize} ranks go on`);
      times.notified = times.agreed = Date.now();
      let superseded = false;
      const committed = this.wait("committed", windowId, 0, steps.length);
      this.faultWindow = {
        supersede: () => {
          superseded = true;
          this.waiters.get(`committed:${windowId}:0`)?.resolve([]);
        },
      };
      this.broadcast(steps, { t: "adapt.go", step: "", adaptId: windowId, generation: next, staying: size, leaving: 0, joining: 0, oldSize, cards: {}, lost: lostRanks });
      const commits = (await within(committed, msg.deadline, `fault window: not every surviving rank committed`).finally(() => (this.faultWindow = undefined))).reduce((a, b) => a + b, 0);
      this.check();
      // Another node was lost before every survivor committed: a window naming it too replaces this one.
      if (superseded) continue;
      if (commits !== size) throw new Error(`only ${commits} of ${size} surviving ranks committed`);
      times.committed = times.released = Date.now();
      this.broadcast(steps, { t: "adapt.done", step: "", adaptId: windowId, generation: next, size });
      this.generation = next;
      this.worldCards = cards.filter((_, r) => !lostRanks.includes(r));
      this.world = survivors;
      for (const n of removed) this.lost.delete(n);
      this.link.adaptDone(msg.adaptId, true, times, undefined, this.placement().tasks);
      return;
    }
  }

  private broadcast(steps: readonly WorldStep[], msg: StepDown): void {
    for (const s of steps) s.root.broadcast({ ...msg, step: s.root.key } as StepDown);
  }

  private wait(kind: AdaptReport["kind"], adaptId: number, round: number, need: number): Promise<number[]> {
    return new Promise((resolve) => {
      const key = `${kind}:${adaptId}:${round}`;
      this.waiters.set(key, {
        need,
        values: [],
        resolve: (v) => {
          this.waiters.delete(key);
          resolve(v);
        },
      });
    });
  }

  private until(done: () => boolean): Promise<void> {
    if (done() || this.failure) return Promise.resolve();
    return new Promise((resolve) => {
      const f = () => {
        if (!done() && !this.failure) return;
        this.exitWaiters.delete(f);
        resolve();
      };
      this.exitWaiters.add(f);
    });
  }

  private check(): void {
    if (this.failure) throw new Error(this.failure);
  }
}
