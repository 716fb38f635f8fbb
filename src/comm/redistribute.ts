/**
 * Redistribution helpers: move a typed array distributed one way (layout.ts) to another, every
 * piece straight from its old owner to its new owner, in the contention-free rounds of
 * schedule.ts (no rank sends two messages at once, none receives two). Nothing goes through
 * rank 0.
 *
 *   const w = await adaptBegin();
 *   const mover = windowMover(w, oldWorld);            // who is old rank / new rank in this window
 *   const plan = planMove(blockLayout(n, mover.oldSize, W), blockLayout(n, mover.newSize, W), mover.staying);
 *   rows = await redistribute(mover, plan, rows);      // null on a leaving rank
 *
 * A Mover hides which communicator joins two ranks: in an adaptation window, old rank o reaches
 * new rank n over the old world when n is a staying rank and over the intercommunicator when it
 * is a joining one; old rank r and new rank r are one process for r < staying.
 */
import type { Comm } from "./comm.ts";
import type { TypedArray } from "./codec.ts";
import type { Window } from "./adapt.ts";
import { CommUsageError } from "./errors.ts";
import type { Plan } from "./schedule.ts";

/** The tag redistribution messages use unless told otherwise. */
export const REDISTRIBUTE_TAG = 0x7e90_0001;

export interface Mover {
  /** This process's rank in the old distribution, -1 if it had none (a joining rank). */
  oldRank: number;
  /** Its rank in the new distribution, -1 if it has none (a leaving rank). */
  newRank: number;
  oldSize: number;
  newSize: number;
  /** Old rank r and new rank r are the same process for r < staying. */
  staying: number;
  send(toNew: number, data: TypedArray, tag: number): Promise<void>;
  recv(fromOld: number, tag: number): Promise<TypedArray>;
}

/**
 * The mover of an adaptation window. `old` is the world before the window on staying and leaving
 * ranks (the world from initAdapt or the last commit), null on joining ranks.
 */
export function windowMover(w: Window, old: Comm | null): Mover {
  const oldSize = w.staying + w.leaving;
  const newSize = w.staying + w.joining;
  const inter = w.intercomm;
  if (old) {
    if (old.size !== oldSize) throw new CommUsageError(`windowMover: the old world has ${old.size} ranks, the window says ${oldSize}`);
    const rank = old.rank;
    return {
      oldRank: rank,
      newRank: rank < w.staying ? rank : -1,
      oldSize,
      newSize,
      staying: w.staying,
      send: (to, data, tag) => (to < w.staying ? old.send(to, data, tag) : inter.send(to - w.staying, data, tag)),
      recv: async (from, tag) => (await old.recv<TypedArray>(from, tag)).data,
    };
  }
  return {
    oldRank: -1,
    newRank: w.staying + inter.rank,
    oldSize,
    newSize,
    staying: w.staying,
    send: () => Promise.reject(new CommUsageError("windowMover: a joining rank has no old data to send")),
    recv: async (from, tag) => (await inter.recv<TypedArray>(from, tag)).data,
  };
}

/**
 * A move inside one communicator: old ranks 0..oldSize-1 and new ranks 0..newSize-1 are its ranks
 * (rank r is both). For redistributing between subsets of a fixed world, and for benchmarks.
 */
export function commMover(comm: Comm, oldSize: number, newSize: number): Mover {
  if (oldSize > comm.size || newSize > comm.size) throw new CommUsageError(`commMover: sizes ${oldSize} -> ${newSize} do not fit a communicator of ${comm.size}`);
  return {
    oldRank: comm.rank < oldSize ? comm.rank : -1,
    newRank: comm.rank < newSize ? comm.rank : -1,
    oldSize,
    newSize,
    staying: Math.min(oldSize, newSize),
    send: (to, data, tag) => comm.send(to, data, tag),
    recv: async (from, tag) => (await comm.recv<TypedArray>(from, tag)).data,
  };
}

type Ctor<T> = { new (n: number): T };

function pack<T extends TypedArray>(local: T, pieces: number[], count: number): T {
  if (pieces.length === 3) return local.subarray(pieces[0]!, pieces[0]! + pieces[2]!) as T;
  const out = new (local.constructor as Ctor<T>)(count);
  let pos = 0;
  for (let k = 0; k < pieces.length; k += 3) {
    out.set(local.subarray(pieces[k]!, pieces[k]! + pieces[k + 2]!) as never, pos);
    pos += pieces[k + 2]!;
  }
  return out;
}

function unpack<T extends TypedArray>(into: T, data: TypedArray, pieces: number[]): void {
  let pos = 0;
  for (let k = 0; k < pieces.length; k += 3) {
    into.set(data.subarray(pos, pos + pieces[k + 2]!) as never, pieces[k + 1]!);
    pos += pieces[k + 2]!;
  }
}

/**
 * Executes `plan` on this process: sends what its old local array `local` owes, receives what its
 * new one is owed. Returns the new local array (same element type), or null on a rank with no new
 * part. Joining ranks pass an empty array of the element type. Every rank of the move must call it
 * with the same plan.
 */
export async function redistribute<T extends TypedArray>(mover: Mover, plan: Plan, local: T, tag = REDISTRIBUTE_TAG): Promise<T | null> {
  if (plan.oldSize !== mover.oldSize || plan.newSize !== mover.newSize || plan.staying !== mover.staying)
    throw new CommUsageError(`redistribute: the plan moves ${plan.oldSize} -> ${plan.newSize} ranks (${plan.staying} staying), the mover ${mover.oldSize} -> ${mover.newSize} (${mover.staying} staying)`);
  const me = mover.oldRank;
  const you = mover.newRank;
  const out = you >= 0 ? new (local.constructor as Ctor<T>)(plan.newLengths[you]!) : null;
  if (out && me === you && me < plan.staying) {
    const self = plan.messages.find((m) => m.round < 0 && m.src === me);
    if (self) unpack(out, pack(local, self.pieces, self.count), self.pieces);
  }
  for (const round of plan.rounds) {
    let sending: Promise<void> | undefined;
    let receiving: Promise<void> | undefined;
    for (const m of round) {
      if (m.src === me) sending = mover.send(m.dst, pack(local, m.pieces, m.count), tag);
      if (m.dst === you) receiving = mover.recv(m.src, tag).then((data) => unpack(out!, data, m.pieces));
    }
    await Promise.all([sending, receiving]);
  }
  return out;
}
