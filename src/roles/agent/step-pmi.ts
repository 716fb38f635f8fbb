/**
 * A step's PMI service on one node: every local rank's connection (an inherited socketpair, or
 * TCP with PMI_PORT), the node-local KVS and fence of `NodeStepPmi`, and this node's part of the
 * step-wide fence: once its ranks and all its children have entered fence `seq`, one `fence.in`
 * goes up with their puts; the merged KVS comes back down as `fence.out`.
 */
import {
  FenceMerge,
  kvsPieces,
  sendPieces,
  type KvsShare,
  type PmiPace,
  attachPmiFd,
  listenPmiPort,
  NodeStepPmi,
  processMapping,
  processMappingOfRanks,
  type PmiConnection,
  type PmiPortServer,
  type PmiRankInfo,
  type SpawnResult,
} from "../../pmi/index.ts";
import type { StepDown, StepSpec, StepUp } from "../../proto/step.ts";
import { logger } from "../../util/log.ts";
import { nodeOfRanks } from "../../sched/layout.ts";

const log = logger("agent");

/**
 * A step that held at least this much KVS collects the garbage when it ends (a full collection,
 * measured 7-60 ms after a 16 MiB KVS): its memory goes back before the next step's fills the heap
 * (bench pmi-memory: RSS right after 20 such steps 1.5x a fresh agent's instead of 2.4x).
 */
const GC_AFTER_KVS_BYTES = 4 << 20;
/** PMI_PORT connections a step's port takes at once beyond one per rank on the node (a rank's reconnect, a tool's probe). */
export const PMI_PORT_SLACK = 16;

type Kvs = Record<string, string>;
type NameOp = "publish" | "lookup" | "unpublish";

export interface StepPmiContext {
  node: string;
  key: string;
  spec: StepSpec;
  /** Global ranks on this node. */
  ranks: number[];
  /** The uid the ranks run as: the only one whose connections a PMI_PORT listener serves. */
  rankUid: number;
  /** Tree children's indices (their fence contributions are awaited). */
  children: number[];
  /** The ranks' user's share of what his steps on this node may hold in their KVS together. */
  kvsShare?: KvsShare;
  /** Paces what the ranks' user's ranks on this node send (PMI_BYTES_PER_SECOND). */
  pace?: PmiPace;
  up(msg: StepUp): void;
  /** `error`: the controller refused the request (a cap); the rank gets it as its error reply. */
  names(op: NameOp, service: string, port?: string): Promise<{ ok: boolean; port?: string; error?: string }>;
  /** ebb's own commands (adaptation, timing samples). */
  extension?(rank: number, cmd: string, args: Record<string, string>): Promise<Record<string, string>> | undefined;
}

interface Fence {
  count: number;
  merged: FenceMerge;
  local: boolean;
  from: Set<number>;
  sent: boolean;
  /** fence.out's pieces so far. */
  out?: FenceMerge;
  resolve?: (kvs: Kvs) => void;
  reject?: (e: Error) => void;
}

export class StepPmi {
  private readonly node: NodeStepPmi;
  private readonly fences = new Map<number, Fence>();
  private readonly lost = new Set<number>();
  private readonly conns = new Map<number, PmiConnection>();
  private readonly spawns = new Map<number, (r: SpawnResult) => void>();
  private readonly unfinalized = new Set<number>();
  private nextReq = 1;
  private port?: PmiPortServer;
  /** A cap on the step's KVS was hit and logged (once per step; each rank still gets its error reply). */
  private capLogged = false;

  /** The step has one node and cannot grow (not elastic): its fences need no one else. */
  private readonly alone: boolean;

  constructor(private readonly c: StepPmiContext) {
    const { spec } = c;
    this.alone = spec.nodes.length === 1 && spec.elastic === undefined;
    const size = worldSizeOf(spec);
    const jobId = `${spec.jobId}.${spec.stepId}`;
    const info = (rank: number): PmiRankInfo => ({
      rank,
      size,
      appnum: appOf(spec, rank),
      kvsname: `kvs_${spec.jobId}_${spec.stepId}`,
      jobId,
      universeSize: spec.universeSize ?? -1,
      spawned: spec.spawn !== undefined,
      spawnerJobId: spec.spawn?.parent,
      debug: false,
    });
    this.node = new NodeStepPmi(
      c.ranks.map(info),
      {
        exchange: (puts, epoch) => this.exchange(puts, epoch),
        jobAttr: (key) => (key === "PMI_process_mapping" ? processMappingOf(spec) : key === "universeSize" && spec.universeSize !== undefined ? String(spec.universeSize) : undefined),
        publish: async (service, port) => {
          const r = await c.names("publish", service, port);
          if (r.error) throw new Error(r.error);
          return r.ok;
        },
        lookup: async (service) => (await c.names("lookup", service)).port,
        unpublish: async (service) => (await c.names("unpublish", service)).ok,
        spawn: (rank, request) =>
          new Promise<SpawnResult>((resolve) => {
            const reqId = this.nextReq++;
            this.spawns.set(reqId, resolve);
            c.up({ t: "spawn", step: c.key, node: c.node, rank, reqId, request });
          }),
        abort: (rank, code, message) =>
          c.up({ t: "error", step: c.key, node: c.node, rank, kind: "abort", code, message: `rank ${rank} on ${c.node} called abort with code ${code}${message ? `: ${message}` : ""}` }),
        protocolError: (rank, message) => c.up({ t: "error", step: c.key, node: c.node, rank, kind: "pmi", message }),
        disconnected: (rank, finalized) => {
          if (!finalized && this.conns.get(rank)?.version !== undefined) this.unfinalized.add(rank);
        },
        extension: c.extension,
        refused: (rank, message) => {
          if (this.capLogged) return;
          this.capLogged = true;
          log.warn(`step ${c.key}: ${rank === undefined ? "a fence" : `rank ${rank}`} refused: ${message}`);
        },
      },
      { ...spec.spawn?.preput, ...spec.preput },
      c.kvsShare,
    );
  }

  /** Opens the PMI_PORT listener when the step uses one, taking at most one connection per rank here and PMI_PORT_SLACK more at once; ranks start after this. */
  async listen(): Promise<void> {
    const { ranks, spec } = this.c;
    if (spec.pmiPort) this.port = await listenPmiPort({
        byId: (id) => (ranks.includes(id) ? this.node.backend(id) : undefined),
        mode: spec.pmi === "none" ? "both" : spec.pmi,
        uid: this.c.rankUid,
        maxOpen: ranks.length + PMI_PORT_SLACK,
        onError: (message) => log.warn(`step ${this.c.key}: ${message}`),
        pace: this.c.pace,
      });
  }

  /** PMI_* variables of one rank; with PMI_FD the rank's fd 3 must be a socketpair (see `stdio`). */
  env(rank: number): Record<string, string> {
    const size = worldSizeOf(this.c.spec);
    const where: Record<string, string> = this.port ? { PMI_PORT: `${this.port.host}:${this.port.port}`, PMI_ID: String(rank) } : { PMI_FD: "3" };
    // EBB_PMI_PIPELINE: this server answers PMI-1 requests in order however many a rank sends ahead (ebb/comm's client then does).
    return { PMI_RANK: String(rank), PMI_SIZE: String(size), EBB_PMI_PIPELINE: "1", ...where, ...(this.c.spec.spawn ? { PMI_SPAWNED: "1" } : {}) };
  }

  /** The fourth stdio slot for a rank: a socketpair end for PMI_FD. */
  get fd3(): "pipe" | undefined {
    return this.port ? undefined : "pipe";
  }

  /** Serve PMI on the agent's end of a rank's socketpair. */
  attach(rank: number, fd: number): void {
    const mode = this.c.spec.pmi === "none" ? "both" : this.c.spec.pmi;
    this.conns.set(rank, attachPmiFd(fd, { mode, backend: this.node.backend(rank) }, this.c.pace));
  }

  /** KVS entries every local rank can read at once (no fence). */
  merge(entries: Kvs): void {
    this.node.merge(entries);
  }

  /** A rank left the step's world (elastic shrink); a pending fence no longer waits for it. */
  removeRank(rank: number): void {
    this.node.removeRank(rank);
  }

  /** A rank that exited 0 after closing an initialized PMI connection without finalize. */
  exitedUnfinalized(rank: number): boolean {
    return this.unfinalized.has(rank);
  }

  fromChild(index: number, msg: Extract<StepUp, { t: "fence.in" }>): void {
    const f = this.fence(msg.seq);
    if (f.from.has(index)) return;
    f.merged.add(msg.kvs, msg.error);
    if (msg.more) return;
    f.from.add(index);
    f.count += msg.count;
    this.maybeUp(msg.seq);
  }

  childLost(index: number): void {
    this.lost.add(index);
    for (const seq of this.fences.keys()) this.maybeUp(seq);
  }

  down(msg: StepDown): void {
    if (msg.t === "fence.out") {
      // Only a fence this node entered; its pieces are counted against the step's caps as they
      // come, and past one the fence fails at once (later pieces find no fence): the launcher is
      // the user's, and could send pieces without end.
      const f = this.fences.get(msg.seq);
      if (!f) return;
      if (msg.more || f.out) {
        f.out ??= new FenceMerge();
        f.out.add(msg.kvs, msg.error);
        if (msg.more && !f.out.error) return;
      }
      this.fences.delete(msg.seq);
      const error = msg.error ?? f.out?.error;
      if (error) f.reject?.(new Error(error));
      else f.resolve?.(f.out?.kvs ?? msg.kvs);
    } else if (msg.t === "spawn.result" && msg.node === this.c.node) {
      const done = this.spawns.get(msg.reqId);
      this.spawns.delete(msg.reqId);
      done?.({ rc: msg.rc, errcodes: msg.errcodes, jobId: msg.jobId, message: msg.message });
    }
  }

  /** The step is failing: pending fences and waits answer with an error. */
  fail(message: string): void {
    this.node.fail(message);
    for (const f of this.fences.values()) f.reject?.(new Error(message));
    this.fences.clear();
    for (const done of this.spawns.values()) done({ rc: -1, message });
    this.spawns.clear();
  }

  /** The step ended: its KVS is dropped and its ranks' connections closed, whatever still holds them. */
  async close(): Promise<void> {
    this.fail("the step has ended");
    const held = this.node.size().bytes;
    this.node.close();
    if (held >= GC_AFTER_KVS_BYTES) Bun.gc(true);
    for (const conn of this.conns.values()) conn.close();
    this.conns.clear();
    await this.port?.close();
  }

  private exchange(puts: Kvs, epoch: number): Promise<Kvs> {
    const f = this.fence(epoch);
    f.local = true;
    f.count += this.c.ranks.length;
    f.merged.add(puts);
    const done = new Promise<Kvs>((resolve, reject) => {
      f.resolve = resolve;
      f.reject = reject;
    });
    this.maybeUp(epoch);
    return done;
  }

  private fence(seq: number): Fence {
    let f = this.fences.get(seq);
    if (!f) this.fences.set(seq, (f = { count: 0, merged: new FenceMerge(), local: this.c.ranks.length === 0, from: new Set(), sent: false }));
    return f;
  }

  private maybeUp(seq: number): void {
    const f = this.fences.get(seq);
    if (!f || f.sent || !f.local) return;
    if (this.c.children.some((i) => !f.from.has(i) && !this.lost.has(i))) return;
    if (this.alone) {
      // Every rank of the step is here: the fence is over without the round trip to the launcher.
      this.fences.delete(seq);
      if (f.merged.error) f.reject?.(new Error(f.merged.error));
      else f.resolve?.(f.merged.kvs);
      return;
    }
    f.sent = true;
    const { kvs, error } = f.merged;
    f.merged = new FenceMerge();
    sendPieces(
      kvsPieces(kvs),
      (piece, last) => this.c.up({ t: "fence.in", step: this.c.key, seq, count: last ? f.count : 0, kvs: piece, ...(error ? { error } : {}), ...(last ? {} : { more: true as const }) }),
      () => this.fences.get(seq) === f,
    );
  }
}

/**
 * PMI_process_mapping of the step's ranks, once per spec (`ebb up`'s agents share it): blocks per
 * node; for cyclic or plane=N over equal counts that N divides, one round, `(vector,(0,nodes,N))`;
 * else the node of every rank, folded (~9 ms of CPU at 65,536 ranks).
 */
const mappings = new WeakMap<StepSpec, string>();
export function processMappingOf(spec: Pick<StepSpec, "tasks" | "distribution">): string {
  let m = mappings.get(spec as StepSpec);
  if (m === undefined) mappings.set(spec as StepSpec, (m = mappingOf(spec)));
  return m;
}

function mappingOf({ tasks, distribution: dist }: Pick<StepSpec, "tasks" | "distribution">): string {
  if (!dist || tasks.length < 2) return processMapping(tasks);
  const chunk = dist.kind === "cyclic" ? 1 : dist.size;
  const each = tasks[0]!;
  if (each > 0 && each % chunk === 0 && tasks.every((t) => t === each)) return `(vector,(0,${tasks.length},${chunk}))`;
  return processMappingOfRanks(nodeOfRanks(tasks, dist));
}

/** Ranks in the step's world: the elastic world's size, else the step's own. */
/** A step's world size: its elastic world's, else its tasks' sum, summed once per spec (every node of the step asks, several times: O(nodes) each). */
const sizes = new WeakMap<StepSpec, number>();
export function worldSizeOf(spec: StepSpec): number {
  if (spec.elastic?.worldSize !== undefined) return spec.elastic.worldSize;
  let size = sizes.get(spec);
  if (size === undefined) sizes.set(spec, (size = spec.tasks.reduce((a, b) => a + b, 0)));
  return size;
}

/** The MPMD program index of a rank (0 without `apps`). */
export function appOf(spec: StepSpec, rank: number): number {
  if (!spec.apps) return 0;
  rank -= spec.elastic?.rankBase ?? 0;
  let end = 0;
  for (let i = 0; i < spec.apps.length; i++) {
    end += spec.apps[i]!.count;
    if (rank < end) return i;
  }
  return spec.apps.length - 1;
}

export function argvOf(spec: StepSpec, rank: number): string[] {
  return spec.apps ? spec.apps[appOf(spec, rank)]!.argv : spec.argv;
}
