/**
 * Data distributions over ranks, as the redistribution helpers (redistribute.ts) see them: a
 * global array of `length` elements in row-major order, each rank holding some of it in one local
 * typed array. A layout answers how long each rank's local array is, and lists its "runs": maximal
 * stretches of consecutive global elements that one rank holds at consecutive local offsets, in
 * increasing global order. Two layouts of the same global array are all a move needs.
 *
 * - block: rows split into `size` contiguous ranges, the first `rows % size` ranks one row longer
 *   (uneven sizes welcome; a rank may hold nothing).
 * - 1-D block-cyclic: rows in blocks of `block`; block k on rank k mod size; a rank's blocks are
 *   stored in order.
 * - 2-D block-cyclic (ScaLAPACK / ReSHAPE): a rows x cols matrix in mb x nb blocks on a pr x pc
 *   process grid (rank = row * pc + col); block (I, J) on grid position (I mod pr, J mod pc); each
 *   rank stores its local matrix row-major.
 */

export interface Layout {
  /** Ranks. */
  readonly size: number;
  /** Elements of the global array. */
  readonly length: number;
  /** Elements rank `rank` holds. */
  localLength(rank: number): number;
  /**
   * The runs, flat: [globalStart, length, rank, localOffset] per run, in increasing globalStart,
   * covering [0, length) exactly once.
   */
  runs(): Float64Array;
}

function check(what: string, v: number, min: number): void {
  if (!Number.isInteger(v) || v < min) throw new RangeError(`${what}: must be an integer >= ${min}, got ${v}`);
}

/** Rows [start, end) of rank `rank` of `size` in the block distribution of `rows` rows. */
export function blockRange(rows: number, size: number, rank: number): [number, number] {
  const base = Math.floor(rows / size);
  const extra = rows % size;
  const start = rank * base + Math.min(rank, extra);
  return [start, start + base + (rank < extra ? 1 : 0)];
}

/** How many of `n` items in blocks of `nb` a process at position `p` of `np` holds (ScaLAPACK's NUMROC). */
export function numroc(n: number, nb: number, p: number, np: number): number {
  const blocks = Math.floor(n / nb);
  let count = Math.floor(blocks / np) * nb;
  const extra = blocks % np;
  if (p < extra) count += nb;
  else if (p === extra) count += n % nb;
  return count;
}

/** Local index of global item `i` in the 1-D block-cyclic distribution (blocks of nb over np). */
export function cyclicLocal(i: number, nb: number, np: number): number {
  return Math.floor(Math.floor(i / nb) / np) * nb + (i % nb);
}

/** Rows split in contiguous ranges; each row is `width` elements. */
export function blockLayout(rows: number, size: number, width = 1): Layout {
  check("rows", rows, 0);
  check("size", size, 1);
  check("width", width, 1);
  return {
    size,
    length: rows * width,
    localLength: (rank) => {
      const [s, e] = blockRange(rows, size, rank);
      return (e - s) * width;
    },
    runs: () => {
      const out: number[] = [];
      for (let r = 0; r < size; r++) {
        const [s, e] = blockRange(rows, size, r);
        if (e > s) out.push(s * width, (e - s) * width, r, 0);
      }
      return Float64Array.from(out);
    },
  };
}

/** Rows in blocks of `block` rows dealt round-robin to the ranks; each row is `width` elements. */
export function blockCyclicLayout(rows: number, block: number, size: number, width = 1): Layout {
  check("rows", rows, 0);
  check("block", block, 1);
  check("size", size, 1);
  check("width", width, 1);
  return {
    size,
    length: rows * width,
    localLength: (rank) => numroc(rows, block, rank, size) * width,
    runs: () => {
      const blocks = Math.ceil(rows / block);
      const out = new Float64Array(blocks * 4);
      for (let k = 0; k < blocks; k++) {
        const first = k * block;
        const n = Math.min(block, rows - first);
        out.set([first * width, n * width, k % size, Math.floor(k / size) * block * width], k * 4);
      }
      return out;
    },
  };
}

export interface Grid2d {
  rows: number;
  cols: number;
  /** Block size: mb rows by nb columns. */
  mb: number;
  nb: number;
  /** Process grid: pr rows by pc columns; rank = gridRow * pc + gridCol. */
  pr: number;
  pc: number;
}

/** Local matrix shape [rows, cols] of `rank` in a 2-D block-cyclic distribution. */
export function localShape(g: Grid2d, rank: number): [number, number] {
  return [numroc(g.rows, g.mb, Math.floor(rank / g.pc), g.pr), numroc(g.cols, g.nb, rank % g.pc, g.pc)];
}

/** A rows x cols matrix in mb x nb blocks on a pr x pc grid, each local matrix row-major. */
export function blockCyclic2dLayout(g: Grid2d): Layout {
  for (const k of ["rows", "cols"] as const) check(k, g[k], 0);
  for (const k of ["mb", "nb", "pr", "pc"] as const) check(k, g[k], 1);
  const size = g.pr * g.pc;
  const localCols = Array.from({ length: g.pc }, (_, c) => numroc(g.cols, g.nb, c, g.pc));
  return {
    size,
    length: g.rows * g.cols,
    localLength: (rank) => {
      const [r, c] = localShape(g, rank);
      return r * c;
    },
    runs: () => {
      const colBlocks = Math.ceil(g.cols / g.nb);
      const out = new Float64Array(g.rows * colBlocks * 4);
      let k = 0;
      for (let i = 0; i < g.rows; i++) {
        const gr = Math.floor(i / g.mb) % g.pr;
        const li = cyclicLocal(i, g.mb, g.pr);
        for (let J = 0; J < colBlocks; J++) {
          const j = J * g.nb;
          const gc = J % g.pc;
          out[k++] = i * g.cols + j;
          out[k++] = Math.min(g.nb, g.cols - j);
          out[k++] = gr * g.pc + gc;
          out[k++] = li * localCols[gc]! + Math.floor(J / g.pc) * g.nb;
        }
      }
      return out;
    },
  };
}

/** The most nearly square grid [rows, cols] with rows * cols = size and rows <= cols. */
export function squarestGrid(size: number): [number, number] {
  check("size", size, 1);
  let r = Math.floor(Math.sqrt(size));
  while (size % r !== 0) r--;
  return [r, size / r];
}
