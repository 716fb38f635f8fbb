/**
 * Collective algorithms over a Channel: point-to-point on the communicator's collective traffic,
 * where messages of one collective call share a sequence number and `step` tells its rounds apart.
 *
 *   barrier    dissemination, ceil(log2 n) rounds
 *   bcast      binomial tree; typed arrays >= BCAST_LARGE_BYTES on > 2 ranks: binomial scatter of
 *              n pieces, then a ring allgather (van de Geijn), so the root sends the data about
 *              once instead of log2 n times. Only the root knows the size: its first message
 *              (to each binomial child, as in the tree) says which algorithm it chose.
 *   reduce     binomial tree, lower ranks combined first
 *   allreduce  recursive doubling (non-powers of two fold the extra ranks in and out), log2 n
 *              rounds of the whole array: best for small data; typed arrays >= RING_BYTES (and at
 *              least n elements) take the ring reduce-scatter + allgather, 2(n-1) rounds of 1/n
 *              of the array each: every rank sends and combines ~2x the array, whatever n
 *   gather     binomial tree, subtrees forwarded as one bundle
 *   scatter    binomial tree, the reverse
 *   allgather  Bruck (any n, ceil(log2 n) rounds). Contributions may differ in size, so ranks
 *              could not agree on a size-based switch to a ring without an extra round.
 *   alltoall   pairwise exchange, n-1 rounds (XOR partners when n is a power of two)
 *
 * Every rank must make the same algorithm choice, so choices depend only on what all ranks share
 * (n, and for reductions the contribution's shape, which must match anyway).
 */
import { Bundle, type Payload, type TypedArray, isTypedArray } from "./codec.ts";
import { type Op, type Reducible, combine } from "./reduce.ts";

export interface Channel {
  readonly rank: number;
  readonly size: number;
  send(dest: number, data: Payload | Bundle, step: number): Promise<void>;
  recv(src: number, step: number): Promise<Payload | Bundle>;
}

/** Typed arrays at least this big take the ring allreduce. */
export const RING_BYTES = 64 * 1024;
/** Typed arrays at least this big are broadcast by scatter + allgather (when n > 2). */
export const BCAST_LARGE_BYTES = 128 * 1024;

/** Element ranges of n nearly equal pieces of `len` elements: piece i is [start(i), start(i+1)). */
function pieces(len: number, n: number): (i: number) => number {
  const base = Math.floor(len / n);
  const extra = len % n;
  return (i: number) => i * base + Math.min(i, extra);
}

function items(b: Payload | Bundle): Payload[] {
  if (!(b instanceof Bundle)) throw new Error("ebb/comm: collective protocol mismatch (expected a bundle)");
  return b.items;
}

function copyOf<T extends Reducible>(x: T): T {
  if (typeof x === "number") return x;
  return (Array.isArray(x) ? [...x] : (x as TypedArray).slice()) as T;
}

export async function barrier(ch: Channel): Promise<void> {
  const { rank: r, size: n } = ch;
  for (let d = 1, step = 0; d < n; d <<= 1, step++) {
    await Promise.all([ch.send((r + d) % n, undefined, step), ch.recv((r - d + n) % n, step)]);
  }
}

export async function bcast(ch: Channel, data: Payload, root: number): Promise<Payload> {
  const n = ch.size;
  const vr = (ch.rank - root + n) % n;
  if (vr === 0 && n > 2 && isTypedArray(data) && data.byteLength >= BCAST_LARGE_BYTES && data.length >= n) {
    return scatterAllgather(ch, root, data.length, Array.from({ length: n }, (_, i) => i), data);
  }
  let mask = 1;
  while (mask < n) {
    if (vr & mask) {
      const got = await ch.recv((vr - mask + root) % n, 0);
      // The root chose scatter + allgather: this is the subtree's pieces, after their total length.
      if (got instanceof Bundle) return scatterAllgather(ch, root, got.items[0] as number, got.items.slice(1) as TypedArray[], undefined, mask);
      data = got as Payload;
      break;
    }
    mask <<= 1;
  }
  const sends: Promise<void>[] = [];
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < n) sends.push(ch.send((vr + mask + root) % n, data, 0));
  }
  await Promise.all(sends);
  return data;
}

/**
 * The large bcast. `mine` holds the pieces of virtual ranks vr.. (the root: all n, as whole-array
 * subarrays); each rank forwards its children's pieces down the binomial tree, then n-1 ring
 * rounds pass every piece around. `mask` is the bit at which this rank received (0 at the root).
 */
async function scatterAllgather(
  ch: Channel,
  root: number,
  len: number,
  mine: TypedArray[] | number[],
  whole?: TypedArray,
  mask = 0,
): Promise<TypedArray> {
  const n = ch.size;
  const vr = (ch.rank - root + n) % n;
  const start = pieces(len, n);
  const parts: (TypedArray | undefined)[] = new Array(n);
  if (whole) for (let i = 0; i < n; i++) parts[i] = whole.subarray(start(i), start(i + 1));
  else (mine as TypedArray[]).forEach((p, j) => (parts[vr + j] = p));
  let m = mask;
  if (m === 0) {
    m = 1;
    while (m < n) m <<= 1;
  }
  const sends: Promise<void>[] = [];
  for (m >>= 1; m > 0; m >>= 1) {
    if (vr + m < n) sends.push(ch.send((vr + m + root) % n, new Bundle([len, ...parts.slice(vr + m, Math.min(vr + 2 * m, n))]), 0));
  }
  await Promise.all(sends);
  const Ctor = parts[vr]!.constructor as new (n: number) => TypedArray;
  const out = whole ?? new Ctor(len);
  const right = (ch.rank + 1) % n;
  const left = (ch.rank - 1 + n) % n;
  for (let s = 0; s < n - 1; s++) {
    const give = (vr - s + n) % n;
    const take = (vr - s - 1 + n) % n;
    const [, got] = await Promise.all([ch.send(right, parts[give], 1 + s), ch.recv(left, 1 + s)]);
    parts[take] = got as TypedArray;
  }
  if (!whole) for (let i = 0; i < n; i++) out.set(parts[i] as never, start(i));
  return out;
}

export async function reduce<T extends Reducible>(ch: Channel, data: T, op: Op, root: number): Promise<T | undefined> {
  const n = ch.size;
  const vr = (ch.rank - root + n) % n;
  let acc = data;
  for (let mask = 1; mask < n; mask <<= 1) {
    if ((vr & mask) === 0) {
      const src = vr | mask;
      if (src < n) {
        const got = (await ch.recv((src + root) % n, 0)) as T;
        acc = combine(acc, got, op, got);
      }
    } else {
      await ch.send((vr - mask + root) % n, acc, 0);
      return undefined;
    }
  }
  return acc === data ? copyOf(data) : acc;
}

export async function allreduce<T extends Reducible>(ch: Channel, data: T, op: Op): Promise<T> {
  const n = ch.size;
  if (n === 1) return copyOf(data);
  if (isTypedArray(data) && data.byteLength >= RING_BYTES && data.length >= n) {
    return (await ringAllreduce(ch, data, op)) as T;
  }
  return recursiveDoubling(ch, data, op);
}

async function recursiveDoubling<T extends Reducible>(ch: Channel, data: T, op: Op): Promise<T> {
  const { rank: r, size: n } = ch;
  let pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  const rem = n - pof2;
  let acc = data;
  let vr: number;
  // The first 2*rem ranks pair up (even gives to odd) so a power of two takes part in the doubling.
  if (r < 2 * rem) {
    if (r % 2 === 0) {
      await ch.send(r + 1, acc, 0);
      vr = -1;
    } else {
      const got = (await ch.recv(r - 1, 0)) as T;
      acc = combine(got, acc, op, got);
      vr = r >> 1;
    }
  } else vr = r - rem;
  let step = 1;
  if (vr >= 0) {
    for (let mask = 1; mask < pof2; mask <<= 1, step++) {
      const vd = vr ^ mask;
      const dst = vd < rem ? vd * 2 + 1 : vd + rem;
      const [, got] = (await Promise.all([ch.send(dst, acc, step), ch.recv(dst, step)])) as [void, T];
      // Both partners compute combine(lower, higher): identical bits on every rank.
      acc = dst < r ? combine(got, acc, op, got) : combine(acc, got, op, got);
    }
  }
  if (r < 2 * rem) {
    if (r % 2 === 1) await ch.send(r - 1, acc, pof2 + 1);
    else acc = (await ch.recv(r + 1, pof2 + 1)) as T;
  }
  return acc === data ? copyOf(data) : acc;
}

async function ringAllreduce(ch: Channel, data: TypedArray, op: Op): Promise<TypedArray> {
  const { rank: r, size: n } = ch;
  const acc = data.slice();
  const start = pieces(acc.length, n);
  const chunk = (i: number) => acc.subarray(start(i), start(i + 1));
  const right = (r + 1) % n;
  const left = (r - 1 + n) % n;
  // Reduce-scatter: after n-1 rounds rank r holds the full reduction of chunk r+1.
  for (let s = 0; s < n - 1; s++) {
    const [, got] = await Promise.all([ch.send(right, chunk((r - s + n) % n), s), ch.recv(left, s)]);
    const dst = chunk((r - s - 1 + n) % n);
    combine(dst, got as TypedArray, op, dst);
  }
  for (let s = 0; s < n - 1; s++) {
    const [, got] = await Promise.all([ch.send(right, chunk((r + 1 - s + n) % n), n + s), ch.recv(left, n + s)]);
    chunk((r - s + n) % n).set(got as never);
  }
  return acc;
}

export async function gather(ch: Channel, data: Payload, root: number): Promise<Payload[] | undefined> {
  const n = ch.size;
  const vr = (ch.rank - root + n) % n;
  const mine: Payload[] = [data]; // relative ranks vr, vr+1, ... of this subtree
  for (let mask = 1; mask < n; mask <<= 1) {
    if ((vr & mask) === 0) {
      const src = vr | mask;
      if (src < n) for (const it of items(await ch.recv((src + root) % n, 0))) mine.push(it);
    } else {
      await ch.send((vr - mask + root) % n, new Bundle(mine), 0);
      return undefined;
    }
  }
  const out = new Array<Payload>(n);
  for (let i = 0; i < n; i++) out[(i + root) % n] = mine[i];
  return out;
}

export async function scatter(ch: Channel, data: readonly Payload[] | undefined, root: number): Promise<Payload> {
  const n = ch.size;
  const vr = (ch.rank - root + n) % n;
  let mine: Payload[];
  let mask: number;
  if (vr === 0) {
    mine = Array.from({ length: n }, (_, i) => data![(i + root) % n]);
    mask = 1;
    while (mask < n) mask <<= 1;
  } else {
    mask = vr & -vr;
    mine = items(await ch.recv((vr - mask + root) % n, 0));
  }
  const sends: Promise<void>[] = [];
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < n) sends.push(ch.send((vr + mask + root) % n, new Bundle(mine.slice(mask, 2 * mask)), 0));
  }
  await Promise.all(sends);
  return mine[0];
}

export async function allgather(ch: Channel, data: Payload): Promise<Payload[]> {
  const { rank: r, size: n } = ch;
  const mine: Payload[] = [data]; // mine[j] is rank (r + j) % n's contribution
  for (let d = 1, step = 0; d < n; d <<= 1, step++) {
    const cnt = Math.min(d, n - d);
    const [, got] = await Promise.all([
      ch.send((r - d + n) % n, new Bundle(mine.slice(0, cnt)), step),
      ch.recv((r + d) % n, step),
    ]);
    for (const it of items(got)) mine.push(it);
  }
  const out = new Array<Payload>(n);
  for (let j = 0; j < n; j++) out[(r + j) % n] = mine[j];
  return out;
}

export async function alltoall(ch: Channel, data: readonly Payload[]): Promise<Payload[]> {
  const { rank: r, size: n } = ch;
  const out = new Array<Payload>(n);
  out[r] = data[r];
  const xor = (n & (n - 1)) === 0;
  for (let s = 1; s < n; s++) {
    const to = xor ? r ^ s : (r + s) % n;
    const from = xor ? r ^ s : (r - s + n) % n;
    const [, got] = await Promise.all([ch.send(to, data[to], s), ch.recv(from, s)]);
    out[from] = got as Payload;
  }
  return out;
}
