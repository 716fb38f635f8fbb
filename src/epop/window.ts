/**
 * What an elastic phase's adapt block gets: the adaptation window of ebb/comm with the sizes and
 * ranks spelled out, and a Mover for the redistribution helpers, so that
 *
 *   adapt: async (d, w) => { d.rows = await w.move(blockLayout(N, w.oldSize, W), blockLayout(N, w.newSize, W), d.rows); }
 *
 * is the whole block on staying, leaving and joining ranks alike.
 */
import { planMove, redistribute, windowMover, type Comm, type Layout, type Mover, type TypedArray, type Window } from "../comm/index.ts";

export interface EpopWindow {
  /** The raw window: intercomm, counts. */
  window: Window;
  mover: Mover;
  /** The world before the window (null on joining ranks) and after it (null on leaving ranks). */
  oldWorld: Comm | null;
  newWorld: Comm | null;
  oldSize: number;
  newSize: number;
  staying: number;
  /** -1 on a joining rank. */
  oldRank: number;
  /** -1 on a leaving rank. */
  newRank: number;
  /** The phase and the iteration the window opened before. */
  pc: number;
  iteration: number;
  /**
   * Moves this rank's part of a global array from layout `from` (old sizes) to `to` (new sizes).
   * Returns the new part; an empty array on a leaving rank.
   */
  move<T extends TypedArray>(from: Layout, to: Layout, local: T, tag?: number): Promise<T>;
}

export function epopWindow(window: Window, oldWorld: Comm | null, pc: number, iteration: number): EpopWindow {
  const mover = windowMover(window, oldWorld);
  return {
    window,
    mover,
    oldWorld,
    newWorld: window.newWorld,
    oldSize: mover.oldSize,
    newSize: mover.newSize,
    staying: mover.staying,
    oldRank: mover.oldRank,
    newRank: mover.newRank,
    pc,
    iteration,
    move: async <T extends TypedArray>(from: Layout, to: Layout, local: T, tag?: number): Promise<T> => (await redistribute(mover, planMove(from, to, mover.staying), local, tag)) ?? (local.subarray(0, 0) as T),
  };
}
