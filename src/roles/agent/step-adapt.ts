/**
 * One node's part of an elastic step's adaptation window (dissertation §6.2.2, §9.3); the protocol
 * is specified in docs/adaptation.md (§5.2-5.3 messages, §6.2 states, §7 rounds).
 *
 * Probe slots live in a /dev/shm file: each local rank counts its probe calls in its own slot;
 * the agent writes the target call into word 0. The launcher drives rounds through the tree:
 *   adapt.count   -> this node's highest count (max up the tree)
 *   adapt.target  -> target stored, then: did a rank pass it before it could see it? (or up the tree)
 *                    ranks reaching the target ask (ebb-probe) and wait here;
 *                    once all local ranks wait, adapt.arrived (sum up the tree)
 *   adapt.release -> a rank ran past: the waiting ones go on; a later target follows
 *   adapt.go      -> waiting ranks enter the window (pending, staying or leaving); cards in the KVS
 *   ebb-commit    -> held until every rank of both worlds has committed (adapt.committed, sum),
 *   adapt.done    -> ... then released; leaving ranks leave the step.
 * Joining ranks (a step started for the adaptation) skip probing: they wait in ebb-begin, and
 * their arrival there (round 0) tells the launcher they are ready.
 *
 * Faults: a rank whose world lost a member probes with fault=1 and waits here until the launcher
 * opens a fault window (adapt.go with `lost`). Then every probe is answered pending (the target
 * word is set to 1, so ranks that saw nothing ask too); the survivors are renumbered in order.
 * Ranks keep their PMI identity (the rank they started as); `worldRank` maps it to their rank
 * in the current world.
 */
import { mark } from "../../util/trace.ts";
import { closeSync, mkdirSync, openSync, ftruncateSync } from "node:fs";
import { removeBeneath } from "./user-files.ts";
import { join } from "node:path";
import { randomTag } from "./shm-sweep.ts";
import { ADAPT_SHM_BYTES, cardKey, CMD, ENV, MAX_LOCAL_RANKS, PROTOCOL_VERSION, SLOT, TARGET, WINDOW, WINDOW_ID, WINDOW_LENGTH, type AdaptWindow } from "../../proto/adapt.ts";
import type { StepDown, StepSpec, StepUp } from "../../proto/step.ts";
import { adaptMessage, adaptReportOf, AdaptReductions } from "../../tbon/adapt-reduce.ts";

type Kvs = Record<string, string>;
type Reply = Record<string, string>;
type Down<T extends string> = Extract<StepDown, { t: T }>;

export interface PerfSample {
  ranks: number;
  iterations: number;
  loopNs: number;
  commNs: number;
  /** Checkpoint-restart ranks: the bytes they registered, summed over the node's ranks (each rank's latest). */
  stateBytes?: number;
}

export interface StepAdaptContext {
  node: string;
  key: string;
  spec: StepSpec & { elastic: NonNullable<StepSpec["elastic"]> };
  /** World ranks on this node, in slot order. */
  ranks: number[];
  children: number[];
  up(msg: StepUp): void;
  /** Put keys in this node's KVS view (the new world's cards). */
  merge(entries: Kvs): void;
  /** A rank's process is gone (after a shrink, or at the end): PMI stops counting it. */
  left(rank: number): void;
  /** Node-local timing sums of the step's ranks, about once per sampling interval. */
  perf(sample: PerfSample): void;
  /** What an EPOP program said about itself (rank 0 only sends it). */
  program(info: Record<string, string>): void;
  shmDir: string;
  /** Runs `fn` with the job's user's rights (the agent runs as root), so the probe file is theirs. */
  openAs<T>(fn: () => T): T;
}

/** The window as the agent keeps it: what it publishes, without the joining ranks' cards. */
type Window = Omit<AdaptWindow, "cards">;

export class StepAdapt {
  private readonly shmName: string;
  private readonly shmPath: string;
  private readonly shm: Int32Array;
  private readonly shmBytes: Uint8Array;
  private readonly slot = new Map<number, number>();
  /** Ranks of this node in the current world. */
  private readonly active = new Set<number>();
  /** Ranks started for an adaptation, until it commits. */
  private joining: boolean;
  private adaptId = 0;
  private round = 0;
  private target = 0;
  private arrivedFor = "";
  /** The open window (from adapt.go to adapt.done). */
  private window: Window | undefined;
  private readonly probing = new Map<number, { index: number; answer: (r: Reply) => void }>();
  private readonly beginning = new Map<number, (r: Reply) => void>();
  private readonly committing = new Map<number, (r: Reply) => void>();
  /** Ranks that saw their world fail, waiting for the fault window. */
  private readonly faultWaiting = new Map<number, (r: Reply) => void>();
  /** PMI identity -> rank in the current world (they differ after a fault renumbered the survivors). */
  private readonly worldRank = new Map<number, number>();
  private readonly reduce: AdaptReductions;
  private perfSum: Omit<PerfSample, "ranks" | "stateBytes"> & { from: Set<number> } = { iterations: 0, loopNs: 0, commNs: 0, from: new Set() };
  /** Each rank's latest registered state (a level, not a rate: kept, not summed over samples). */
  private readonly stateBytes = new Map<number, number>();
  private stateChanged = false;
  private perfTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly c: StepAdaptContext) {
    const e = c.spec.elastic;
    if (c.ranks.length > MAX_LOCAL_RANKS) throw new Error(`at most ${MAX_LOCAL_RANKS} ranks per node can be elastic`);
    this.joining = e.status === "joining";
    c.ranks.forEach((r, i) => {
      this.slot.set(r, i);
      this.active.add(r);
      this.worldRank.set(r, r);
    });
    mkdirSync(c.shmDir, { recursive: true });
    // Made and mapped as the job's user, who maps it too: "wx" and a random part refuse a planted
    // name. Mapped through the descriptor made, not the name: the user may replace the name at
    // once (a link, a mount of hers whose pages never come), never the file the agent maps.
    this.shmName = `ebb-adapt-${c.node}-${c.spec.jobId}.${c.spec.stepId}.${randomTag()}-${process.pid}`;
    this.shmPath = join(c.shmDir, this.shmName);
    const mem = c.openAs(() => {
      const fd = openSync(this.shmPath, "wx+", 0o600);
      try {
        ftruncateSync(fd, ADAPT_SHM_BYTES);
        return Bun.mmap(`/proc/self/fd/${fd}`, { shared: true } as unknown as undefined);
      } finally {
        closeSync(fd);
      }
    });
    this.shm = new Int32Array(mem.buffer, mem.byteOffset, ADAPT_SHM_BYTES / 4);
    this.shmBytes = mem;
    if (e.window) this.adaptId = e.window.adaptId;
    this.reduce = new AdaptReductions(c.children, (r) => c.up(adaptMessage(c.key, r)));
  }

  /** The adaptation variables of a rank's environment. */
  env(rank: number): Record<string, string> {
    return {
      [ENV.shm]: this.shmPath,
      [ENV.slot]: String(this.slot.get(rank)),
      [ENV.status]: this.joining ? "joining" : "new",
      [ENV.generation]: String(this.c.spec.elastic.generation),
      [ENV.protocol]: String(PROTOCOL_VERSION),
      [ENV.sampleInterval]: String(this.c.spec.elastic.sampleInterval),
    };
  }

  extension(rank: number, cmd: string, args: Record<string, string>): Promise<Reply> | undefined {
    switch (cmd) {
      case CMD.probe:
        return this.probe(rank, Number(args.index), args.fault === "1", args.stale);
      case CMD.begin:
        return this.begin(rank);
      case CMD.commit:
        return this.commit(rank);
      case CMD.perf:
        this.addPerf(rank, args);
        return Promise.resolve({});
      case CMD.program:
        this.c.program(args);
        return Promise.resolve({});
      default:
        return undefined;
    }
  }

  down(msg: StepDown): void {
    switch (msg.t) {
      case "adapt.count":
        return this.count(msg);
      case "adapt.target":
        return this.setTarget(msg);
      case "adapt.release":
        return this.release(msg);
      case "adapt.go":
        return this.go(msg);
      case "adapt.done":
        return this.done();
      default:
        return;
    }
  }

  fromChild(index: number, msg: StepUp): boolean {
    const r = adaptReportOf(msg);
    if (r) this.reduce.child(index, r);
    return r !== undefined;
  }

  childLost(index: number): void {
    this.reduce.childLost(index);
  }

  /** A rank's process ended: it no longer takes part in anything. */
  rankExited(rank: number): void {
    // Its PMI identity goes now: a leaving rank finalizes PMI after its commit, before it exits.
    this.c.left(rank);
    if (!this.active.delete(rank)) return;
    this.probing.delete(rank);
    this.checkArrived();
    this.checkCommitted();
  }

  /** The step is failing: every rank waiting here gets an error. */
  fail(message: string): void {
    for (const w of [...this.probing.values()]) w.answer({ rc: "-1", msg: message });
    for (const a of [...this.beginning.values(), ...this.committing.values(), ...this.faultWaiting.values()]) a({ rc: "-1", msg: message });
    this.faultWaiting.clear();
    this.probing.clear();
    this.beginning.clear();
    this.committing.clear();
  }

  close(): void {
    if (this.perfTimer) clearTimeout(this.perfTimer);
    // By its name, without entering what the user may have mounted on it (user-files.ts); such a mount is left.
    try {
      this.c.openAs(() => removeBeneath(this.c.shmDir, this.shmName));
    } catch {
      /* her mount: hers to undo */
    }
  }

  // ---- rank requests ----

  private wr(rank: number): number {
    return this.worldRank.get(rank) ?? rank;
  }

  private faultReply(): Reply {
    const w = this.window!;
    return { pending: "1", status: "staying", adapt: String(w.adaptId), fault: "1", lost: w.lost!.join(",") };
  }

  private probe(rank: number, index: number, fault = false, stale?: string): Promise<Reply> {
    // `stale`: a fault window this rank saw voided by another failure; it waits for the next one.
    if (this.window?.lost && String(this.window.adaptId) !== stale) return Promise.resolve(this.faultReply());
    // This rank's world failed: it waits for the fault window (or the step's end).
    if (fault) return new Promise<Reply>((answer) => this.faultWaiting.set(rank, answer));
    if (!Number.isInteger(index) || index < 1) return Promise.resolve({ rc: "-1", msg: `bad probe index ${index}` });
    // Not (yet) at the target: a stale read, or a rank between rounds. Nothing is pending for it.
    if (this.target === 0 || index !== this.target || this.window) return Promise.resolve({ pending: "0", status: "staying" });
    return new Promise<Reply>((answer) => {
      this.probing.set(rank, { index, answer });
      this.checkArrived();
    });
  }

  private begin(rank: number): Promise<Reply> {
    // Joining ranks wait here until the preexisting ones enter the window.
    if (this.joining && !this.window)
      return new Promise<Reply>((answer) => {
        this.beginning.set(rank, answer);
        this.checkArrived();
      });
    if (!this.window) return Promise.resolve({ rc: "-1", msg: "no adaptation window is open (probeAdapt did not say pending)" });
    return Promise.resolve(this.windowReply(rank));
  }

  private commit(rank: number): Promise<Reply> {
    if (!this.window) return Promise.resolve({ rc: "-1", msg: "no adaptation window is open" });
    return new Promise<Reply>((answer) => {
      this.committing.set(rank, answer);
      this.checkCommitted();
    });
  }

  private windowReply(rank: number): Reply {
    const w = this.window!;
    const old = this.wr(rank);
    if (w.lost) {
      return {
        generation: String(w.generation),
        staying: String(w.staying),
        leaving: "0",
        joining: "0",
        rank: String(old - w.lost.filter((l) => l < old).length),
        size: String(w.staying),
        oldrank: String(old),
        oldsize: String(w.oldSize),
        lost: w.lost.join(","),
      };
    }
    rank = old;
    const newRank = this.joining ? rank : rank < w.staying ? rank : -1;
    return {
      generation: String(w.generation),
      staying: String(w.staying),
      leaving: String(w.leaving),
      joining: String(w.joining),
      rank: String(newRank),
      size: String(w.staying + w.joining),
      oldrank: String(this.joining ? -1 : rank),
      oldsize: String(w.oldSize),
    };
  }

  private addPerf(rank: number, args: Record<string, string>): void {
    const s = this.perfSum;
    s.iterations += Number(args.iterations) || 0;
    s.loopNs += Number(args.loop_ns) || 0;
    s.commNs += Number(args.comm_ns) || 0;
    s.from.add(rank);
    const bytes = Number(args.state_bytes);
    if (args.state_bytes !== undefined && Number.isFinite(bytes) && bytes >= 0 && this.stateBytes.get(rank) !== bytes) {
      this.stateBytes.set(rank, bytes);
      this.stateChanged = true;
    }
    // Node-local reduction: one sample per interval once every local rank has reported.
    if ([...this.active].every((r) => s.from.has(r))) return this.flushPerf();
    this.perfTimer ??= setTimeout(() => this.flushPerf(), this.c.spec.elastic.sampleInterval * 500);
  }

  private flushPerf(): void {
    if (this.perfTimer) clearTimeout(this.perfTimer);
    this.perfTimer = undefined;
    const s = this.perfSum;
    if (s.from.size === 0) return;
    const state = this.stateChanged ? { stateBytes: [...this.stateBytes.values()].reduce((a, b) => a + b, 0) } : {};
    this.stateChanged = false;
    this.c.perf({ ranks: s.from.size, iterations: s.iterations, loopNs: s.loopNs, commNs: s.commNs, ...state });
    this.perfSum = { iterations: 0, loopNs: 0, commNs: 0, from: new Set() };
  }

  // ---- protocol rounds ----

  private enter(adaptId: number, round: number): void {
    this.adaptId = adaptId;
    this.round = round;
  }

  private count(msg: Down<"adapt.count">): void {
    mark("a.count", msg.round);
    this.enter(msg.adaptId, msg.round);
    let max = 0;
    for (const r of this.active) max = Math.max(max, Atomics.load(this.shm, SLOT(this.slot.get(r)!)));
    this.reduce.local("counted", msg.adaptId, msg.round, max);
  }

  private setTarget(msg: Down<"adapt.target">): void {
    this.enter(msg.adaptId, msg.round);
    this.target = msg.target;
    // Store first, then read the counts: a rank that stored its count after this read will load
    // the target after its store, so it sees the target. Any count at or past the target that is
    // not a rank waiting at it may have gone by unseen.
    Atomics.store(this.shm, TARGET, msg.target);
    let racer = false;
    for (const r of this.active) {
      const count = Atomics.load(this.shm, SLOT(this.slot.get(r)!));
      if (count >= msg.target && this.probing.get(r)?.index !== msg.target) racer = true;
    }
    this.reduce.local("checked", msg.adaptId, msg.round, racer ? 1 : 0);
    this.checkArrived();
  }

  private release(msg: Down<"adapt.release">): void {
    this.enter(msg.adaptId, msg.round);
    this.target = 0;
    Atomics.store(this.shm, TARGET, 0);
    for (const w of this.probing.values()) w.answer({ pending: "0", status: "staying" });
    this.probing.clear();
  }

  private go(msg: Down<"adapt.go">): void {
    mark("a.go", this.joining ? "joining" : "old");
    // A fault while a resize's window is open (agreed, not committed): that window is void. Ranks
    // waiting to commit are told so; they go to the fault window, in the world before the resize.
    // Likewise a fault window that lost another node: this one, naming every lost rank, replaces it.
    if (msg.lost && this.window) this.abortWindow(`the adaptation was aborted: ranks ${msg.lost.join(",")} failed`);
    this.window = { adaptId: msg.adaptId, generation: msg.generation, staying: msg.staying, leaving: msg.leaving, joining: msg.joining, oldSize: msg.oldSize, lost: msg.lost };
    this.c.merge(msg.cards);
    this.publish(msg);
    if (msg.lost) {
      // Every probe from now on asks (and is told pending), whatever its count.
      this.target = 0;
      Atomics.store(this.shm, TARGET, 1);
      for (const [, w] of this.probing) w.answer(this.faultReply());
      this.probing.clear();
      for (const answer of this.faultWaiting.values()) answer(this.faultReply());
      this.faultWaiting.clear();
      this.checkCommitted();
      return;
    }
    this.target = 0;
    Atomics.store(this.shm, TARGET, 0);
    for (const [rank, w] of this.probing) w.answer({ pending: "1", status: this.wr(rank) < msg.staying ? "staying" : "leaving", adapt: String(msg.adaptId) });
    this.probing.clear();
    for (const [rank, answer] of this.beginning) answer(this.windowReply(rank));
    this.beginning.clear();
    // A node whose ranks have all left has nothing to wait for.
    this.checkCommitted();
  }

  private abortWindow(why: string): void {
    for (const answer of this.committing.values()) answer({ aborted: "1", why });
    this.committing.clear();
    for (const answer of this.beginning.values()) answer({ rc: "-1", msg: why });
    this.beginning.clear();
    this.window = undefined;
  }

  /** Write the window where the ranks' probe slots are, before any probe is answered. */
  private publish(msg: Down<"adapt.go">): void {
    const w: AdaptWindow = {
      adaptId: msg.adaptId,
      generation: msg.generation,
      staying: msg.staying,
      leaving: msg.leaving,
      joining: msg.joining,
      oldSize: msg.oldSize,
      cards: Array.from({ length: msg.joining }, (_, i) => msg.cards[cardKey(msg.staying + i, msg.generation)] ?? ""),
      ...(msg.lost ? { lost: msg.lost } : {}),
    };
    const bytes = new TextEncoder().encode(JSON.stringify(w));
    if (bytes.length > this.shmBytes.length - WINDOW) {
      Atomics.store(this.shm, WINDOW_ID, 0); // too big: ranks ask over PMI instead
      return;
    }
    this.shmBytes.set(bytes, WINDOW);
    Atomics.store(this.shm, WINDOW_LENGTH, bytes.length);
    Atomics.store(this.shm, WINDOW_ID, msg.adaptId);
  }

  private done(): void {
    const w = this.window;
    if (w?.lost) {
      Atomics.store(this.shm, TARGET, 0);
      for (const r of this.active) {
        const old = this.wr(r);
        this.worldRank.set(r, old - w.lost.filter((l) => l < old).length);
      }
    }
    for (const answer of this.committing.values()) answer({});
    this.committing.clear();
    if (w && !w.lost && !this.joining) for (const r of [...this.active]) if (this.wr(r) >= w.staying) this.active.delete(r);
    this.window = undefined;
    this.joining = false;
    this.target = 0;
    this.reduce.clear();
  }

  /**
   * All local ranks wait where the launcher wants them (joining ranks: in ebb-begin, round 0;
   * preexisting ranks: at the round's target): tell it, once per round.
   */
  private checkArrived(): void {
    const round = this.joining ? 0 : this.round;
    const key = `arrived:${this.adaptId}:${round}`;
    if (this.adaptId === 0 || this.arrivedFor === key) return;
    const ready = this.joining
      ? [...this.active].every((r) => this.beginning.has(r))
      : this.target !== 0 && [...this.active].every((r) => this.probing.get(r)?.index === this.target);
    if (!ready) return;
    this.arrivedFor = key;
    mark("a.arrived", round);
    this.reduce.local("arrived", this.adaptId, round, this.active.size);
  }

  private checkCommitted(): void {
    if (!this.window) return;
    if (![...this.active].every((r) => this.committing.has(r))) return;
    mark("a.committed", this.joining ? "joining" : "old");
    this.reduce.local("committed", this.window.adaptId, 0, this.active.size);
  }
}
