/**
 * A fence's puts travel the step tree in pieces of at most FENCE_PIECE_MAX (UTF-16 units of keys
 * and values), one piece per event-loop turn. Whole, a 16 MiB `fence.in` or `fence.out` cost its
 * sender ~300 ms of CPU to encode and each receiver ~150 ms to parse in one turn: at load ~40 an
 * agent got ~5 % of a core, stalled for seconds, missed its heartbeat and its node was declared dead.
 */
export const FENCE_PIECE_MAX = 1 << 20;

/** `kvs` cut into records of at most `max` units each (an entry longer than `max` alone), in order; always at least one. */
export function kvsPieces(kvs: Record<string, string>, max = FENCE_PIECE_MAX): Record<string, string>[] {
  const pieces: Record<string, string>[] = [];
  // No prototype: a key "__proto__" is then an entry like any other.
  let piece: Record<string, string> = Object.create(null);
  let units = 0;
  for (const k in kvs) {
    const v = kvs[k]!;
    const size = k.length + v.length;
    if (units > 0 && units + size > max) {
      pieces.push(piece);
      piece = Object.create(null);
      units = 0;
    }
    piece[k] = v;
    units += size;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * Calls `send(piece, last)` for each piece, the first at once and each next one a turn of the
 * event loop later (setImmediate), while `wanted()` (the step still runs) says so.
 */
export function sendPieces(pieces: Record<string, string>[], send: (piece: Record<string, string>, last: boolean) => void, wanted: () => boolean = () => true): void {
  let at = 0;
  const next = (): void => {
    if (!wanted()) return;
    const piece = pieces[at]!;
    pieces[at++] = {};
    send(piece, at === pieces.length);
    if (at < pieces.length) setImmediate(next);
  };
  next();
}
