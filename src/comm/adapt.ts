/**
 * The adaptation window (dissertation ch. 6) for Bun programs run by ebb:
 *
 *   const { world, status } = await initAdapt();     // "new", or "joining" for ranks a grow started
 *   if (status === "joining") await window();          // joining ranks go straight to the window
 *   for (;;) {
 *     if ((await probeAdapt()).pending) await window();
 *     ...compute, communicate on world...
 *   }
 *   async function window() {
 *     const { intercomm, newWorld, staying, leaving, joining } = await adaptBegin();
 *     ...redistribute data (old world, intercomm to joining ranks, newWorld)...
 *     world = (await adaptCommit()) ?? process.exit(0);  // null: this rank left, and must exit
 *   }
 *
 * Faults (dissertation §6.1.2): when a member of the world dies, the world is revoked on every
 * rank that learns of it; the application catches the error and calls probeAdapt(), which waits
 * for the fault window (pending, `fault` set, the lost ranks named); adaptBegin() gives the
 * survivors' world. The rank's side of the protocol is specified in docs/adaptation.md (§5.3, §6.3, §7).
 *
 * Every rank must see an adaptation at the same probe call, which means the same point of the
 * program: in this structure a staying rank finishes the iteration in which it entered the window
 * before its next probe, while a joining rank probes first. So at each commit the count restarts,
 * one lower for joining ranks: probe call k is then preceded by k iterations on every rank.
 *
 * probeAdapt() with nothing pending stores its call count in this rank's probe slot (node-shared
 * memory set up by the agent) and reads the target: no syscall, no message. It also measures each
 * iteration (probe to probe) and the time inside comm calls, and reports sums to the agent once
 * per sampling interval.
 */
import { mark } from "../util/trace.ts";
import { PmiClient } from "../pmi/client.ts";
import { cardKey, CMD, ENV, PROTOCOL_VERSION, SLOT, TARGET, WINDOW, WINDOW_ID, WINDOW_LENGTH, type AdaptWindow } from "../proto/adapt.ts";
import { VERSION } from "../util/version.ts";
import { Comm, contextOf, Intercomm } from "./comm.ts";
import { CommError, CommUsageError, InvalidCommError } from "./errors.ts";
import { startCfg, writeCfg } from "./cfg.ts";
import { resetCommTime } from "./timing.ts";
import { os } from "./lazy.ts";
import { createWorld, finalize, initWorld, parseCard, type Bootstrap } from "./world.ts";
import type { Card, Transport } from "./transport.ts";

export type AdaptStatus = "new" | "joining";
export type ProbeStatus = "staying" | "leaving" | "joining";

export interface Probe {
  pending: boolean;
  status: ProbeStatus;
  /** A fault window: ranks of the world died; `lost` names them (old ranks). */
  fault?: boolean;
  lost?: number[];
}

export interface Window {
  /** Old group (staying and leaving ranks) on one side, joining ranks on the other. */
  intercomm: Intercomm;
  /** The world after the commit; null for leaving ranks. */
  newWorld: Comm | null;
  staying: number;
  leaving: number;
  joining: number;
  /** Old ranks that died (a fault window; empty otherwise). Survivor r's new rank is r minus the lost ranks below it. */
  lost: number[];
  /** This rank's rank in the old world. */
  oldRank: number;
}

interface State {
  pmi: PmiClient;
  transport: Transport;
  world: Comm | null;
  joining: boolean;
  left: boolean;
  shm: Int32Array | undefined;
  shmBytes: Uint8Array | undefined;
  slot: number;
  /** The adaptation a pending probe announced. */
  pendingAdapt: number;
  /** A window this rank was in and that a fault voided: the agent must not offer it again. */
  abortedWindow: number;
  /** The member failure that revoked the world (or aborted a window), until the fault window commits. */
  faulted: CommError | undefined;
  count: number;
  window: (Window & { old: Comm | null }) | undefined;
  lastProbe: number;
  perf: { iterations: number; loopNs: number; commNs: number; lastSent: number; intervalNs: number };
}

const NOT_PENDING: Readonly<Probe> = Object.freeze({ pending: false, status: "staying" as const });
const NOT_PENDING_NOW = Promise.resolve(NOT_PENDING);

let st: State | undefined;

function state(op: string): State {
  if (!st) throw new CommUsageError(`${op}: call initAdapt() first`);
  if (st.left) throw new CommUsageError(`${op}: this rank left the world at the last adaptation and must exit`);
  return st;
}

function pmiBootstrap(pmi: PmiClient, node: string): Bootstrap {
  return { rank: pmi.rank, size: pmi.size, node, put: (k, v) => pmi.put(k, v), get: (k) => pmi.get(k), fence: () => pmi.fence() };
}

function probeSlots(): { shm: Int32Array | undefined; shmBytes: Uint8Array | undefined; slot: number } {
  const path = process.env[ENV.shm];
  if (!path) return { shm: undefined, shmBytes: undefined, slot: 0 };
  const mem = Bun.mmap(path, { shared: true } as unknown as undefined);
  return { shm: new Int32Array(mem.buffer, mem.byteOffset, mem.byteLength >> 2), shmBytes: mem, slot: Number(process.env[ENV.slot] ?? 0) };
}

/** The window the agent published next to the probe slots, if it is the one the probe announced. */
function publishedWindow(s: State): AdaptWindow | undefined {
  if (!s.shm || !s.shmBytes || s.pendingAdapt === 0 || Atomics.load(s.shm, WINDOW_ID) !== s.pendingAdapt) return undefined;
  const length = Atomics.load(s.shm, WINDOW_LENGTH);
  return JSON.parse(new TextDecoder().decode(s.shmBytes.subarray(WINDOW, WINDOW + length))) as AdaptWindow;
}

/** Asked all at once: one round trip between them when the client pipelines. */
async function cardsOf(pmi: PmiClient, ranks: Iterable<number>, generation: number): Promise<Card[]> {
  return Promise.all(
    Array.from(ranks, async (r) => {
      const text = await pmi.get(cardKey(r, generation));
      if (text === undefined) throw new CommUsageError(`no business card for rank ${r} of world ${generation}`);
      return parseCard(text);
    }),
  );
}

/**
 * MPI_Init_adapt: wire up and say whether this process started with the job ("new") or was
 * started by a grow ("joining"; its world is the new world, usable once the window commits).
 */
export async function initAdapt(): Promise<{ world: Comm; status: AdaptStatus }> {
  if (st) throw new CommUsageError("initAdapt() was already called");
  const refused = protocolRefusal(process.env);
  if (refused) throw new CommUsageError(refused);
  mark("r.init");
  const pmi = await PmiClient.connect();
  mark("r.pmi-connected");
  const node = process.env.EBB_NODENAME ?? os().hostname();
  const generation = Number(process.env[ENV.generation] ?? 0);
  const joining = process.env[ENV.status] === "joining";
  const { shm, shmBytes, slot } = probeSlots();
  // Joining ranks too: the staying ranks' cards were pre-put in their step's KVS, the joining
  // ones meet in the fence.
  const world = await initWorld(pmiBootstrap(pmi, node), { generation });
  const transport = world.transport;
  const interval = Number(process.env[ENV.sampleInterval] ?? 60);
  startCfg();
  st = {
    pmi,
    transport,
    world,
    joining,
    left: false,
    shm,
    shmBytes,
    slot,
    pendingAdapt: 0,
    abortedWindow: 0,
    faulted: undefined,
    count: 0,
    window: undefined,
    lastProbe: 0,
    perf: { iterations: 0, loopNs: 0, commNs: 0, lastSent: Bun.nanoseconds(), intervalNs: interval * 1e9 },
  };
  watchFaults(st, world);
  mark("r.world-ready");
  return { world, status: joining ? "joining" : "new" };
}

/**
 * Why this rank may not take part in its elastic step: its agent speaks another protocol version
 * than this ebb/comm (docs/adaptation.md §10.4); undefined outside an elastic step or when they agree.
 */
export function protocolRefusal(env: Record<string, string | undefined>): string | undefined {
  if (!env[ENV.shm]) return undefined;
  const theirs = Number(env[ENV.protocol] ?? 0);
  if (theirs === PROTOCOL_VERSION) return undefined;
  const which = theirs > PROTOCOL_VERSION ? "build the program with the agent's newer ebb/comm" : "upgrade the node's ebb, or build the program with the ebb/comm of its release";
  return `the agent speaks adaptation protocol ${theirs}, this program's ebb/comm (ebb ${VERSION}) protocol ${PROTOCOL_VERSION}: ${which}`;
}

/** In an elastic step, a member's failure revokes the world: nothing on it waits for the dead. */
function watchFaults(s: State, world: Comm): void {
  if (!s.shm) return;
  world.onMemberFailed = (e) => {
    if (s.world !== world) return;
    // In a fault window the old world's dead are known (lost, or survivors whose failure the new
    // world reports itself): a late notice of them must not void it.
    revoke(s, e, !s.window?.lost.length);
  };
}

/**
 * A member of the world, or of an open window's communicators, failed (or the agent aborted the
 * window): the world and the window are revoked, so nothing waits for the dead or for ranks that
 * went to the fault window; the next probeAdapt() asks for the fault window.
 */
function revoke(s: State, e: CommError, voidWindow = true): void {
  s.faulted ??= e;
  const why = `revoked: ${e.message.replace(/^ebb\/comm: /, "")}; call probeAdapt() for the fault window`;
  s.world?.invalidate(why);
  const w = s.window;
  if (w && voidWindow) {
    // The window is void (a resize's, or a fault window that lost another member): the next fault window replaces it.
    w.intercomm.invalidate(why);
    w.newWorld?.invalidate(why);
    s.abortedWindow = s.pendingAdapt;
  }
}

/**
 * MPI_Probe_adapt: is an adaptation pending, and is this rank staying or leaving? Every rank of
 * the job gets pending at the same call. Costs a few hundred nanoseconds when nothing is pending.
 */
export function probeAdapt(): Promise<Probe> {
  const s = state("probeAdapt");
  const now = Bun.nanoseconds();
  const p = s.perf;
  // Only whole iterations count: not the start-up before the first probe, nor the one that held a window.
  const comm = resetCommTime();
  if (s.lastProbe !== 0) {
    const loop = now - s.lastProbe;
    p.iterations++;
    p.loopNs += loop;
    p.commNs += Math.min(comm, loop);
  }
  s.lastProbe = now;
  if (now - p.lastSent >= p.intervalNs) sendSamples(s, now);
  const c = ++s.count;
  if (s.faulted) return slowProbe(s, Math.max(c, 1), true);
  if (!s.shm) return NOT_PENDING_NOW;
  Atomics.store(s.shm, SLOT(s.slot), c);
  const target = Atomics.load(s.shm, TARGET);
  if (target === 0 || c < target) return NOT_PENDING_NOW;
  return slowProbe(s, c);
}

async function slowProbe(s: State, index: number, fault = false): Promise<Probe> {
  const r = await s.pmi.command(CMD.probe, fault ? { index: String(index), fault: "1", ...(s.abortedWindow ? { stale: String(s.abortedWindow) } : {}) } : { index: String(index) });
  if (r.rc !== undefined && r.rc !== "0") throw new CommUsageError(`probeAdapt: ${r.msg ?? `the agent answered rc=${r.rc}`}`);
  if (r.pending !== "1") return NOT_PENDING;
  mark("r.pending");
  s.pendingAdapt = Number(r.adapt ?? 0);
  if (r.fault === "1") {
    // A window this rank was in is void: the fault window replaces it (its world is the one before it).
    s.window = undefined;
    return { pending: true, status: "staying", fault: true, lost: parseRanks(r.lost) };
  }
  return { pending: true, status: r.status === "leaving" ? "leaving" : "staying" };
}

function parseRanks(text: string | undefined): number[] {
  return text ? text.split(",").map(Number) : [];
}

function sendSamples(s: State, now: number): void {
  const p = s.perf;
  const args = { iterations: String(p.iterations), loop_ns: String(Math.round(p.loopNs)), comm_ns: String(Math.round(p.commNs)) };
  p.iterations = 0;
  p.loopNs = 0;
  p.commNs = 0;
  p.lastSent = now;
  s.pmi.command(CMD.perf, args).catch(() => {});
}

/**
 * MPI_Comm_adapt_begin: open the window. Joining ranks wait here until the preexisting ranks have
 * all entered it. Returns the intercommunicator between old group and joining ranks, the new world
 * (null for leaving ranks) and the counts.
 */
export async function adaptBegin(): Promise<Window> {
  const s = state("adaptBegin");
  if (s.window) return s.window;
  mark("r.begin", s.joining ? "joining" : "old");
  // Preexisting ranks read the window the agent published with the probe slots; otherwise ask.
  const published = s.joining ? undefined : publishedWindow(s);
  const r = published ? undefined : await s.pmi.command(CMD.begin);
  const n = (k: "generation" | "staying" | "leaving" | "joining" | "oldSize") => (published ? published[k] : Number(r![k === "oldSize" ? "oldsize" : k]));
  const generation = n("generation");
  const [staying, leaving, joining] = [n("staying"), n("leaving"), n("joining")];
  const oldSize = n("oldSize");
  const lost = published ? (published.lost ?? []) : parseRanks(r!.lost);
  mark("r.window", s.joining ? "joining" : "old");
  if (lost.length > 0) return faultWindow(s, generation, lost, staying, oldSize);
  // A joining rank knows the staying ranks already (their cards are the same in both worlds); it
  // asks only for the leaving ones' (a round trip to its agent, which may be busy).
  const oldGroup = s.joining
    ? [...s.world!.members.slice(0, staying), ...(await cardsOf(s.pmi, Array.from({ length: oldSize - staying }, (_, i) => staying + i), generation - 1))]
    : s.world!.members;
  const joiners = s.joining
    ? s.world!.members.slice(staying)
    : published
      ? published.cards.map(parseCard)
      : await cardsOf(s.pmi, Array.from({ length: joining }, (_, i) => staying + i), generation);
  const ctx = contextOf(generation, 1);
  let intercomm: Intercomm;
  let newWorld: Comm | null;
  let old: Comm | null = null;
  if (s.joining) {
    newWorld = s.world;
    intercomm = new Intercomm(s.transport, { ctx, rank: joiners.findIndex((c) => c.id === s.transport.id), local: joiners, remote: oldGroup, name: "adapt-intercomm" });
  } else {
    old = s.world!;
    newWorld = old.rank >= staying ? null : createWorld(s.transport, [...old.members.slice(0, staying), ...joiners], { generation });
    intercomm = new Intercomm(s.transport, { ctx, rank: old.rank, local: old.members, remote: joiners, name: "adapt-intercomm", parent: old });
  }
  s.window = { intercomm, newWorld, staying, leaving, joining, old, lost: [], oldRank: s.joining ? -1 : old!.rank };
  // A member of the window failing (a joining rank's node, say) aborts it: the fault window follows.
  if (s.shm && !s.joining) {
    intercomm.onMemberFailed = (e) => s.window?.intercomm === intercomm && revoke(s, e);
    if (newWorld) newWorld.onMemberFailed = (e) => s.window?.newWorld === newWorld && revoke(s, e);
  }
  return s.window;
}

/** The fault window: the survivors' world, in old rank order; nobody joins, the dead are gone. */
function faultWindow(s: State, generation: number, lost: number[], survivors: number, oldSize: number): Window {
  const old = s.world!;
  const dead = new Set(lost);
  if (old.size !== oldSize) throw new CommUsageError(`fault window for a world of ${oldSize} ranks, but this rank's world has ${old.size}`);
  const members = old.members.filter((_, r) => !dead.has(r));
  if (members.length !== survivors) throw new CommUsageError(`fault window: ${members.length} survivors here, ${survivors} per the agent`);
  const newWorld = createWorld(s.transport, members, { generation });
  const intercomm = new Intercomm(s.transport, { ctx: contextOf(generation, 1), rank: old.rank, local: old.members, remote: [], name: "adapt-intercomm" });
  s.window = { intercomm, newWorld, staying: survivors, leaving: 0, joining: 0, old, lost, oldRank: old.rank };
  // Another survivor failing before the commit voids this window: a fault window naming it follows.
  newWorld.onMemberFailed = (e) => s.window?.newWorld === newWorld && revoke(s, e);
  return s.window;
}

/**
 * MPI_Comm_adapt_commit: returns once every rank of the old and the new world has committed. The
 * new world becomes the world (and is returned) and everything derived from the old one is
 * invalid. Leaving ranks are disconnected and finalized, get null, and must exit.
 */
export async function adaptCommit(): Promise<Comm | null> {
  const s = state("adaptCommit");
  const w = s.window;
  if (!w) throw new CommUsageError("adaptCommit: no window is open; call adaptBegin() first");
  mark("r.commit", s.joining ? "joining" : "old");
  const r = await s.pmi.command(CMD.commit);
  mark("r.committed");
  if (r.aborted === "1") {
    // A node of the world failed before every rank committed: this window is void, the fault window follows.
    const e = new InvalidCommError("adaptation window", r.why ?? "aborted by a fault");
    revoke(s, e);
    s.window = undefined;
    throw e;
  }
  w.intercomm.invalidate("the adaptation window closed");
  w.old?.invalidate("replaced by the world of the last adaptation");
  s.window = undefined;
  s.pendingAdapt = 0;
  s.abortedWindow = 0;
  s.faulted = undefined;
  // Probe calls are counted from the window on (see the header: joining ranks one lower).
  s.count = s.joining ? -1 : 0;
  s.joining = false;
  s.lastProbe = 0;
  resetCommTime();
  if (s.shm) Atomics.store(s.shm, SLOT(s.slot), s.count);
  if (!w.newWorld) {
    s.left = true;
    s.world = null;
    await finalize();
    await s.pmi.finalize();
    return null;
  }
  s.world = w.newWorld;
  watchFaults(s, w.newWorld);
  return w.newWorld;
}

/**
 * Tells the resource manager about the program (EPOP's structure and progress): a PMI command the
 * agent forwards to the controller; fire and forget. A no-op before initAdapt or after leaving.
 */
export function reportProgram(args: Record<string, string>): void {
  if (!st || st.left) return;
  st.pmi.command(CMD.program, args).catch(() => {});
}

/** The current world (after initAdapt, and after each commit). */
export function world(): Comm {
  const w = state("world").world;
  if (!w) throw new CommUsageError("world: no world");
  return w;
}

/** Leave cleanly at the end of the program: last samples out, peers told, PMI finalized. */
export async function finalizeAdapt(): Promise<void> {
  if (!st || st.left) return;
  sendSamples(st, Bun.nanoseconds());
  writeCfg();
  await finalize();
  await st.pmi.finalize();
  st.left = true;
}
