import type { PmiBackend, PmiRankInfo, SpawnRequest, SpawnResult } from "./backend.ts";
import { CountedKvs, type KvsSize, kvsCapExceeded, userKvsCost, userKvsFull } from "./kvs.ts";

/** The step's user's share of what all his steps on the node may hold: `BytesShare` (domain/user-bytes.ts, `UserBytes.of` in the agent), declared here because pmi/ imports only util/. */
export interface KvsShare {
  readonly max: number;
  take(n: number): boolean;
  give(n: number): void;
}

/** What the agent supplies for one step on one node; everything node-local is handled by NodeStepPmi. */
export interface NodeStepHooks {
  /**
   * The step-wide part of a fence, called once per fence when every local rank has entered:
   * send this node's puts up the tree, resolve with the puts of ALL nodes for this fence
   * (this node's included). A rejection fails every local rank's fence with its message.
   */
  exchange(puts: Record<string, string>, epoch: number): Promise<Record<string, string>>;
  /** `PMI_process_mapping`, `universeSize`, ... */
  jobAttr?(key: string): string | undefined;
  publish?(service: string, port: string): Promise<boolean>;
  lookup?(service: string): Promise<string | undefined>;
  unpublish?(service: string): Promise<boolean>;
  spawn?(rank: number, req: SpawnRequest): Promise<SpawnResult>;
  abort?(rank: number, code: number, message: string): void;
  finalize?(rank: number): void;
  protocolError?(rank: number, message: string): void;
  disconnected?(rank: number, finalized: boolean): void;
  /**
   * A put, a node attribute or a fence's result was refused: it would take the step's key-value
   * space past a cap (KVS_MAX_KEYS, KVS_MAX_BYTES), named in `message`. `rank` is the rank whose
   * put it was, undefined for a fence or a merge. The rank gets the message as its error reply.
   */
  refused?(rank: number | undefined, message: string): void;
  extension?(rank: number, cmd: string, args: Record<string, string>): Promise<Record<string, string>> | undefined;
}

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

const unsupported = (what: string) => Promise.reject(new Error(`${what} is not available in this step`));

/**
 * The node-local half of a step's PMI service (Hydra's proxy, Slurm's stepd): one KVS view shared
 * by the local ranks, puts cached until the fence, one upward `exchange` per fence once all local
 * ranks have entered it, node attributes with waiting readers. `backend(rank)` is what a
 * PmiConnection needs.
 */
export class NodeStepPmi {
  private readonly ranks = new Map<number, PmiRankInfo>();
  /** The step's KVS as of the last fence; with the pending puts and node attributes, it is what the caps count. */
  private readonly kvs = new CountedKvs();
  private readonly puts = new CountedKvs();
  private arrived = new Set<number>();
  private waiting: Waiter[] = [];
  private readonly nodeAttrs = new CountedKvs();
  private readonly preput = new CountedKvs();
  private readonly attrWaiters = new Map<string, Array<{ resolve: (v: string) => void; reject: (e: Error) => void }>>();
  private failure: Error | undefined;
  private fences = 0;
  /** What this step has taken of its user's share (userKvsCost of its size). */
  private charged = 0;

  constructor(
    ranks: readonly PmiRankInfo[],
    private readonly hooks: NodeStepHooks,
    /** Spawned steps: keys readable before the first fence. */
    preput: Readonly<Record<string, string>> = {},
    /** The user's share across his steps on the node; without it, only the per-step caps count. */
    private readonly share?: KvsShare,
  ) {
    for (const r of ranks) this.ranks.set(r.rank, r);
    for (const [k, v] of Object.entries(preput)) this.preput.set(k, v);
    const why = this.capExceeded(this.size());
    if (why) this.failure = new Error(`the preput keys: ${why}`);
  }

  /** Fences completed so far. */
  get epoch(): number {
    return this.fences;
  }

  get localRanks(): number[] {
    return [...this.ranks.keys()];
  }

  /** Elastic steps: a joining rank on this node. */
  addRank(info: PmiRankInfo): void {
    this.ranks.set(info.rank, info);
  }

  /** Elastic steps: a rank that left this node; a fence waiting only for it completes. */
  removeRank(rank: number): void {
    this.ranks.delete(rank);
    this.arrived.delete(rank);
    this.maybeExchange();
  }

  /** Keys that appear in the local KVS without a fence (an adaptation's new business cards); past a cap, the step's PMI fails instead. */
  merge(entries: Readonly<Record<string, string>>): void {
    // A failed or ended step keeps nothing more (nor takes more of its user's share).
    if (this.failure) return;
    const why = this.capExceeded(this.kvs.sizeWithAll(entries, this.size()));
    if (why) {
      this.hooks.refused?.(undefined, why);
      return this.fail(why);
    }
    for (const [k, v] of Object.entries(entries)) this.kvs.set(k, v);
  }

  /** Keys and bytes the step holds on this node: the KVS, the pending puts, the node attributes, the preput keys. */
  size(): KvsSize {
    const stores = [this.kvs, this.puts, this.nodeAttrs, this.preput];
    return { keys: stores.reduce((n, s) => n + s.keys, 0), bytes: stores.reduce((n, s) => n + s.bytes, 0) };
  }

  /** The step has ended: its keys and values are dropped (whatever still holds a connection holds no KVS), and every later request fails. */
  close(): void {
    this.fail("the step has ended");
    this.kvs.clear();
    this.puts.clear();
    this.nodeAttrs.clear();
    this.preput.clear();
    this.charge({ keys: 0, bytes: 0 });
  }

  /**
   * Why the step may not grow to `size` (a per-step cap, or its user's share on the node), or
   * undefined: then its share is charged for `size` already, as the caller is about to hold it.
   */
  private capExceeded(size: KvsSize): string | undefined {
    return kvsCapExceeded(size) ?? (this.charge(size) ? undefined : userKvsFull(this.share!.max));
  }

  /** Takes from (or gives back to) the user's share what holding `size` costs; false, nothing taken, past the share. */
  private charge(size: KvsSize): boolean {
    if (!this.share) return true;
    const need = userKvsCost(size) - this.charged;
    if (need > 0 && !this.share.take(need)) return false;
    if (need < 0) this.share.give(-need);
    this.charged += need;
    return true;
  }

  /** Update what a rank is told (size, universeSize after a resize). */
  updateInfo(rank: number, patch: Partial<Omit<PmiRankInfo, "rank">>): void {
    const cur = this.ranks.get(rank);
    if (cur) this.ranks.set(rank, { ...cur, ...patch });
  }

  /** The step is failing: pending and future fences and node-attribute waits reject with `message`. */
  fail(message: string): void {
    this.failure ??= new Error(message);
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    for (const list of this.attrWaiters.values()) for (const w of list) w.reject(this.failure);
    this.attrWaiters.clear();
  }

  backend(rank: number): PmiBackend {
    const step = this;
    const h = this.hooks;
    if (!this.ranks.has(rank)) throw new RangeError(`rank ${rank} is not on this node`);
    return {
      get info(): PmiRankInfo {
        const info = step.ranks.get(rank);
        if (!info) throw new Error(`rank ${rank} has left this node`);
        return info;
      },
      jobAttr: (key) => h.jobAttr?.(key),
      put: (key, value) => step.put(rank, key, value),
      get: (key) => step.kvs.get(key) ?? step.preput.get(key),
      fence: () => step.fence(rank),
      nodeAttrPut: (key, value) => step.nodeAttrPut(rank, key, value),
      nodeAttrGet: (key, wait) => step.nodeAttrGet(key, wait),
      publish: (service, port) => h.publish?.(service, port) ?? unsupported("the name service"),
      lookup: (service) => h.lookup?.(service) ?? unsupported("the name service"),
      unpublish: (service) => h.unpublish?.(service) ?? unsupported("the name service"),
      spawn: (req) => h.spawn?.(rank, req) ?? unsupported("spawn"),
      abort: (code, message) => h.abort?.(rank, code, message),
      finalize: () => h.finalize?.(rank),
      protocolError: (message) => h.protocolError?.(rank, message),
      disconnected: (finalized) => h.disconnected?.(rank, finalized),
      extension: h.extension ? (cmd, args) => h.extension?.(rank, cmd, args) : undefined,
    };
  }

  /** Throws, with the cap in its message, a put that would take the step past a cap. */
  private admit(rank: number, store: CountedKvs, key: string, value: string): void {
    if (this.failure) throw this.failure;
    const why = this.capExceeded(store.sizeWith(key, value, this.size()));
    if (!why) return;
    this.hooks.refused?.(rank, why);
    throw new Error(why);
  }

  private put(rank: number, key: string, value: string): void {
    this.admit(rank, this.puts, key, value);
    this.puts.set(key, value);
  }

  private fence(rank: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.arrived.has(rank)) return Promise.reject(new Error(`rank ${rank} entered the same fence twice`));
    this.arrived.add(rank);
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.maybeExchange();
    return done;
  }

  private maybeExchange(): void {
    if (this.failure || this.waiting.length === 0) return;
    for (const r of this.ranks.keys()) if (!this.arrived.has(r)) return;
    const waiters = this.waiting.splice(0);
    const puts = this.puts.toRecord();
    this.puts.clear();
    this.charge(this.size());
    this.arrived = new Set();
    const epoch = ++this.fences;
    let exchanged: Promise<Record<string, string>>;
    try {
      exchanged = this.hooks.exchange(puts, epoch);
    } catch (e) {
      exchanged = Promise.reject(e);
    }
    exchanged.then(
      (all) => {
        const why = this.failure?.message ?? this.capExceeded(this.kvs.sizeWithAll(all, this.size()));
        if (why) {
          if (!this.failure) this.hooks.refused?.(undefined, why);
          for (const w of waiters) w.reject(new Error(why));
          return;
        }
        for (const [k, v] of Object.entries(all)) this.kvs.set(k, v);
        for (const w of waiters) w.resolve();
      },
      (e: unknown) => {
        const err = e instanceof Error ? e : new Error(String(e));
        for (const w of waiters) w.reject(err);
      },
    );
  }

  private nodeAttrPut(rank: number, key: string, value: string): void {
    this.admit(rank, this.nodeAttrs, key, value);
    this.nodeAttrs.set(key, value);
    const list = this.attrWaiters.get(key);
    this.attrWaiters.delete(key);
    for (const w of list ?? []) w.resolve(value);
  }

  private nodeAttrGet(key: string, wait: boolean): Promise<string | undefined> {
    const v = this.nodeAttrs.get(key);
    if (v !== undefined || !wait) return Promise.resolve(v);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const list = this.attrWaiters.get(key) ?? [];
      list.push({ resolve, reject });
      this.attrWaiters.set(key, list);
    });
  }
}
