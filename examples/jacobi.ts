/**
 * An elastic 2-D Jacobi heat solver: a plate with its top edge held at 100 degrees, the other
 * edges at 0, relaxed for a fixed number of iterations. Interior rows are block-distributed over
 * the ranks; every iteration exchanges halo rows with the neighbours and probes for adaptations.
 * In an adaptation window the rows move to their owners under the new distribution: staying ranks
 * over the old world, joining ranks over the intercommunicator. The result does not depend on how
 * many ranks computed it, or on when they changed: the checksum is the same to the last bit.
 *
 *   ebb run -N 2 --elastic --min-nodes 1 --max-nodes 4 bun examples/jacobi.ts --rows 512 --iters 5000
 *   ebb resize JOBID --nodes 4
 *
 * Faults: every --checkpoint K iterations (default 10; 0 = never) each rank sends its rows to a
 * buddy on another node and keeps its own; the last three such snapshots are kept in memory. When
 * a node dies, the world is revoked, probeAdapt() reports the fault window and the lost ranks, and
 * the survivors agree on the newest snapshot they all hold, take the lost rows from their buddies,
 * redistribute over the new world and go on from that iteration: the answer is the same bits.
 *
 * Flags: --rows N --cols M (interior size, default 256x256), --iters K (default 2000),
 * --sleep MS (extra time per iteration, to watch it adapt), --every K (print progress),
 * --checkpoint K (iterations between buddy copies), --hold-window FILE (preexisting ranks wait in
 * each window, a resize's or a fault's, until FILE exists: for tests of faults during a window),
 * --hold-leave FILE (a rank a shrink removed waits after its commit until FILE exists before it
 * exits: the launcher reports the shrink once its leaving ranks are gone), --hold-end FILE (after
 * the last iteration the ranks wait, still adapting and recovering, until FILE exists before they
 * gather the answer: a test's fault or resize cannot come after the end, however short the run).
 */
import { existsSync } from "node:fs";
import { adaptBegin, adaptCommit, CommError, finalizeAdapt, initAdapt, probeAdapt, type Comm, type Intercomm } from "ebb/comm";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) {
    console.error(`jacobi: --${name} needs a non-negative number`);
    process.exit(2);
  }
  return v;
}

const ROWS = flag("rows", 256);
const COLS = flag("cols", 256);
const ITERS = flag("iters", 2000);
const SLEEP = flag("sleep", 0);
const EVERY = flag("every", 0);
const CHECKPOINT = flag("checkpoint", 10);
const pathFlag = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const HOLD = pathFlag("hold-window");
const HOLD_LEAVE = pathFlag("hold-leave");
const HOLD_END = pathFlag("hold-end");
const W = COLS + 2; // a row with its two boundary columns
const HOT = 100;

/** Rows [start, end) of the interior owned by `rank` of `size` (block distribution). */
function block(rank: number, size: number): [number, number] {
  const base = Math.floor(ROWS / size);
  const extra = ROWS % size;
  const start = rank * base + Math.min(rank, extra);
  return [start, start + base + (rank < extra ? 1 : 0)];
}

/** Local rows plus a halo row above and below; returns the two buffers (current, next). */
function allocate(rows: number): [Float64Array, Float64Array] {
  return [new Float64Array((rows + 2) * W), new Float64Array((rows + 2) * W)];
}

let { world, status } = await initAdapt();
let iteration = 0;
let [first, last] = block(world.rank, world.size);
let [u, next] = allocate(last - first);

/** A snapshot of the world's rows at one iteration: this rank's, and copies of the ranks it is buddy of. */
interface Snapshot {
  iteration: number;
  own: Float64Array;
  copies: Map<number, Float64Array>;
}
let snaps: Snapshot[] = [];

/** The rank that keeps `rank`'s copy: the next one, cyclically, on another node (if any). */
function buddyOf(comm: Comm, rank: number): number {
  const node = comm.members[rank]!.node;
  for (let k = 1; k < comm.size; k++) {
    const b = (rank + k) % comm.size;
    if (comm.members[b]!.node !== node) return b;
  }
  return (rank + 1) % comm.size;
}

async function checkpoint(): Promise<void> {
  const own = u.slice(W, (last - first + 1) * W);
  const me = world.rank;
  const buddy = buddyOf(world, me);
  const send = buddy !== me ? observed(world.send(buddy, own, 20)) : Promise.resolve();
  const copies = new Map<number, Float64Array>();
  for (let r = 0; r < world.size; r++) {
    if (r !== me && buddyOf(world, r) === me) copies.set(r, (await world.recv<Float64Array>(r, 20)).data);
  }
  await send;
  snaps.push({ iteration, own, copies });
  if (snaps.length > 3) snaps.shift();
}

/**
 * A send whose receive partner failed first is left behind when that receive throws; its own
 * rejection then comes later, and unobserved it would end this process at exit. Observed here,
 * it is still awaited where no fault came first.
 */
function observed(sent: Promise<void>): Promise<void> {
  sent.catch(() => {});
  return sent;
}

function isFault(e: unknown): boolean {
  return e instanceof CommError && (e.code === "PEER_FAILED" || e.code === "COMM_INVALID");
}

/**
 * The fault window: survivors agree on the newest snapshot all of them hold, the holders of each
 * old rank's rows (the rank itself, or its buddy if it died) send them to their new owners.
 */
async function recover(): Promise<void> {
  const w = await adaptBegin();
  const old = world;
  const nw = w.newWorld!;
  if (HOLD) {
    if (old.rank === 0) console.log(`jacobi: iteration ${iteration}: in the fault window (lost ${w.lost.join(",")})`);
    while (!existsSync(HOLD)) await Bun.sleep(20);
  }
  const oldSize = w.staying + w.lost.length;
  const dead = new Set(w.lost);
  const newSize = nw.size;
  const newRankOf = (r: number) => r - w.lost.filter((l) => l < r).length;
  const holderOf = (r: number) => (dead.has(r) ? buddyOf(old, r) : r);
  for (const r of w.lost) if (dead.has(holderOf(r))) throw new Error(`jacobi: rank ${r} and its buddy ${holderOf(r)} were both lost; no copy is left`);
  const newest = snaps.length > 0 ? snaps[snaps.length - 1]!.iteration : -1;
  const at = (await nw.allreduce(newest, "min")) as number;
  const snap = snaps.find((s) => s.iteration === at);
  if (!snap) throw new Error(`jacobi: no snapshot of iteration ${at} here (have ${snaps.map((s) => s.iteration).join(",") || "none"})`);
  const me = nw.rank;
  const range = block(me, newSize);
  const [fresh] = allocate(range[1] - range[0]);
  const sends: Promise<void>[] = [];
  for (let r = 0; r < oldSize; r++) {
    if (holderOf(r) !== w.oldRank) continue;
    const rows = r === w.oldRank ? snap.own : snap.copies.get(r);
    if (!rows) throw new Error(`jacobi: no copy of rank ${r}'s rows at iteration ${at}`);
    const [os, oe] = block(r, oldSize);
    for (let q = 0; q < newSize; q++) {
      const [ns, ne] = block(q, newSize);
      const s = Math.max(os, ns);
      const e = Math.min(oe, ne);
      if (s >= e) continue;
      const piece = rows.subarray((s - os) * W, (e - os) * W);
      if (q === me) fresh.set(piece, (s - range[0] + 1) * W);
      else sends.push(observed(nw.send(q, piece.slice(), 100 + r)));
    }
  }
  for (let r = 0; r < oldSize; r++) {
    const [os, oe] = block(r, oldSize);
    const s = Math.max(os, range[0]);
    const e = Math.min(oe, range[1]);
    const from = newRankOf(holderOf(r));
    if (s >= e || from === me) continue;
    fresh.set((await nw.recv<Float64Array>(from, 100 + r)).data, (s - range[0] + 1) * W);
  }
  await Promise.all(sends);
  world = (await adaptCommit())!;
  status = "new";
  [first, last] = range;
  u = fresh;
  next = new Float64Array(u.length);
  snaps = [];
  const lostAt = iteration;
  iteration = at;
  // No rank lost: a node a grow added failed before the commit, and this window voided the grow's.
  const lost = w.lost.length === 0 ? "no rank" : `rank${w.lost.length === 1 ? "" : "s"} ${w.lost.join(",")}`;
  if (world.rank === 0) console.log(`jacobi: fault: lost ${lost} at iteration ${lostAt}; restored iteration ${at} on ${world.size} ranks (was ${oldSize})`);
}

function neighbours(): { up: number | undefined; down: number | undefined } {
  return { up: world.rank > 0 ? world.rank - 1 : undefined, down: world.rank < world.size - 1 ? world.rank + 1 : undefined };
}

/** Fill the halo rows: the hot edge above the first rank, zeros below the last, neighbours' rows between. */
async function exchange(): Promise<void> {
  const n = last - first;
  const { up, down } = neighbours();
  const sends: Promise<void>[] = [];
  if (up !== undefined && n > 0) sends.push(observed(world.send(up, u.slice(W, 2 * W), 1)));
  if (down !== undefined && n > 0) sends.push(observed(world.send(down, u.slice(n * W, (n + 1) * W), 2)));
  if (up === undefined) u.fill(HOT, 1, W - 1);
  else u.set((await world.recv<Float64Array>(up, 2)).data, 0);
  if (down !== undefined) u.set((await world.recv<Float64Array>(down, 1)).data, (n + 1) * W);
  await Promise.all(sends);
}

function relax(): void {
  const n = last - first;
  for (let i = 1; i <= n; i++) {
    const row = i * W;
    for (let j = 1; j <= COLS; j++) {
      const k = row + j;
      next[k] = 0.25 * (u[k - W]! + u[k + W]! + u[k - 1]! + u[k + 1]!);
    }
  }
  [u, next] = [next, u];
}

/**
 * The adaptation window. Every old rank sends the rows it holds to their new owners; every new
 * rank receives its rows from their old owners. Staying ranks keep their rank, so old rank r and
 * new rank r are the same process when r < staying; joining ranks are reached over the intercomm.
 */
async function adapt(): Promise<void> {
  const w = await adaptBegin();
  const oldSize = w.staying + w.leaving;
  const newSize = w.staying + w.joining;
  const joining = status === "joining";
  const inter: Intercomm = w.intercomm;
  const oldRank = joining ? -1 : world.rank;
  const newRank = joining ? w.staying + inter.rank : oldRank < w.staying ? oldRank : -1;
  if (HOLD && !joining) {
    if (oldRank === 0) console.log(`jacobi: iteration ${iteration}: in the window (${oldSize} -> ${newSize} ranks)`);
    while (!existsSync(HOLD)) await Bun.sleep(20);
  }

  if (joining) iteration = (await inter.recv<number>(0, 9)).data;
  else if (oldRank === 0) await Promise.all(Array.from({ length: w.joining }, (_, r) => inter.send(r, iteration, 9)));

  const sends: Promise<void>[] = [];
  if (oldRank >= 0) {
    for (let to = 0; to < newSize; to++) {
      const [ns, ne] = block(to, newSize);
      const s = Math.max(ns, first);
      const e = Math.min(ne, last);
      if (s >= e || to === newRank) continue; // its own rows (a staying rank: old rank r is new rank r)
      const rows = u.slice((s - first + 1) * W, (e - first + 1) * W);
      sends.push(observed(to < w.staying ? world.send(to, rows, 10) : inter.send(to - w.staying, rows, 10)));
    }
  }
  let fresh = u;
  let range = [first, last] as [number, number];
  if (newRank >= 0) {
    range = block(newRank, newSize);
    [fresh] = allocate(range[1] - range[0]);
    for (let from = 0; from < oldSize; from++) {
      const [os, oe] = block(from, oldSize);
      const s = Math.max(os, range[0]);
      const e = Math.min(oe, range[1]);
      if (s >= e) continue;
      const rows =
        from === oldRank
          ? u.subarray((s - first + 1) * W, (e - first + 1) * W)
          : joining
            ? (await inter.recv<Float64Array>(from, 10)).data
            : (await world.recv<Float64Array>(from, 10)).data;
      fresh.set(rows, (s - range[0] + 1) * W);
    }
  }
  await Promise.all(sends);
  world = (await adaptCommit()) ?? (await leave(oldRank)); // null: this rank left
  status = "new";
  [first, last] = range;
  u = fresh;
  next = new Float64Array(u.length);
  snaps = [];
  if (world.rank === 0) console.log(`jacobi: iteration ${iteration}: now ${world.size} ranks (was ${oldSize})`);
}

/** A rank the shrink removed: it ends (once --hold-leave's file exists). */
async function leave(oldRank: number): Promise<never> {
  if (HOLD_LEAVE) {
    console.log(`jacobi: rank ${oldRank} left at iteration ${iteration}, holding`);
    while (!existsSync(HOLD_LEAVE)) await Bun.sleep(20);
  }
  process.exit(0);
}

/**
 * --hold-end: may the ranks, done iterating, go on to the answer? All of them decide it together
 * (a rank must not gather while another probes into an adaptation window).
 */
async function released(): Promise<boolean> {
  return !HOLD_END || (await world.allreduce(existsSync(HOLD_END) ? 1 : 0, "min")) === 1;
}

if (status === "joining") await adapt();
let all: Float64Array[] | undefined;
for (;;) {
  try {
    while (iteration < ITERS || HOLD_END) {
      const p = await probeAdapt();
      if (p.pending) {
        if (p.fault) {
          await recover(); // a fault in it is caught below, and the next fault window recovers
          continue;
        }
        await adapt();
      }
      // After the probe: every rank (joining ones too) is then at the same iteration. In the hold
      // too: an adaptation there drops the copies, and a fault after it needs new ones.
      if (CHECKPOINT > 0 && (snaps.length === 0 || iteration - snaps[snaps.length - 1]!.iteration >= CHECKPOINT)) await checkpoint();
      // Held: the decision comes after the probe, as an iteration's exchange does: a rank that
      // joined here probes once before it (see ebb/comm's probe count), and all probe in step.
      if (iteration >= ITERS) {
        if (await released()) break;
        await Bun.sleep(20);
        continue;
      }
      await exchange();
      relax();
      iteration++;
      if (EVERY > 0 && iteration % EVERY === 0 && world.rank === 0) console.log(`jacobi: iteration ${iteration} on ${world.size} ranks`);
      if (SLEEP > 0) await Bun.sleep(SLEEP);
    }
    // Gather the interior to rank 0 and fingerprint its exact bits (FNV-1a over the Float64 bytes).
    all = (await world.gather(u.slice(W, (last - first + 1) * W), 0)) as Float64Array[] | undefined;
    break;
  } catch (e) {
    // A rank died: wait for the fault window, restore, go on (again if another dies meanwhile). Anything else is a bug.
    if (CHECKPOINT === 0 || !isFault(e)) throw e;
    for (;;) {
      const p = await probeAdapt();
      if (!p.fault) throw e;
      try {
        await recover();
        break;
      } catch (again) {
        if (!isFault(again)) throw again;
      }
    }
  }
}
if (world.rank === 0) {
  let h = 0x811c9dc5;
  let total = 0;
  for (const part of all as Float64Array[]) {
    const bytes = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0;
    for (let i = 0; i < part.length; i++) total += part[i]!;
  }
  console.log(`jacobi: done iterations=${iteration} ranks=${world.size} checksum=${h.toString(16).padStart(8, "0")} heat=${total.toFixed(6)}`);
}
await finalizeAdapt();
