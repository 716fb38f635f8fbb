/**
 * A single-producer single-consumer byte ring in a shared-memory file, mapped by two processes
 * on one node (Bun.mmap of a /dev/shm file, MAP_SHARED). The producer copies frames in, the
 * consumer copies them out: a message is copied twice, whatever its size, and a message larger
 * than the ring streams through it (the consumer reads while the producer writes).
 *
 * Layout: a 4 KiB control block, then `size` bytes of ring (a power of two). The control block
 * holds 32-bit words, each on its own 64-byte line so the two sides do not share lines they write:
 *
 *   word 0  magic          word 1  producer pid (who owns the segment)   word 2  ring size
 *   line 1  tail           bytes written, ever (mod 2^32); written by the producer only
 *   line 2  head           bytes read, ever (mod 2^32); written by the consumer only
 *   line 3  readerSleeps   1: the consumer is not polling, ring its bell (a socket frame) on data
 *   line 4  writerSleeps   1: the producer waits for space, ring its bell when some is freed
 *
 * Waking: a side that stops polling sets its "sleeps" word, then looks once more (so a write
 * between its last look and the flag is not missed); the other side swaps the word to 0 after
 * publishing and, if it was 1, sends a bell. All of these are Atomics operations (sequentially
 * consistent, full fences on x86-64 for the read-modify-write ones), which is what the
 * flag-then-recheck handshake needs.
 */
import { fs } from "./lazy.ts";

const MAGIC = 0x45424253;
const CONTROL = 4096;
const W_MAGIC = 0;
const W_PID = 1;
const W_SIZE = 2;
const W_TAIL = 16;
const W_HEAD = 32;
const W_READER_SLEEPS = 48;
const W_WRITER_SLEEPS = 64;
/** Large copies go in steps of this size, each published at once (pipelining within one message). */
const STEP = 128 * 1024;

export class Ring {
  private readonly ctl: Int32Array;
  private readonly data: Uint8Array;
  private readonly mask: number;
  /** Our side's counter (tail for the producer, head for the consumer), mirrored locally. */
  private pos: number;
  /**
   * The producer's last reading of the consumer's head. It is read again only when it leaves less
   * room than a write needs, so the producer seldom loads the line the consumer writes at every
   * read (each such load is a cache miss across cores).
   */
  private headSeen: number;

  private constructor(
    readonly path: string,
    map: Uint8Array,
    readonly size: number,
    producer: boolean,
  ) {
    this.ctl = new Int32Array(map.buffer as ArrayBuffer, map.byteOffset, CONTROL / 4);
    this.data = new Uint8Array(map.buffer as ArrayBuffer, map.byteOffset + CONTROL, size);
    this.mask = size - 1;
    this.pos = Atomics.load(this.ctl, producer ? W_TAIL : W_HEAD) >>> 0;
    this.headSeen = Atomics.load(this.ctl, W_HEAD) >>> 0;
  }

  /** Creates the segment file and maps it (the producer's side). */
  static create(path: string, size: number): Ring {
    if (!Number.isInteger(Math.log2(size)) || size < 4096 || size > 2 ** 30) throw new Error(`ring size ${size} must be a power of two, 4 KiB..1 GiB`);
    const { openSync, ftruncateSync, closeSync } = fs();
    const fd = openSync(path, "wx", 0o600);
    try {
      ftruncateSync(fd, CONTROL + size);
    } finally {
      closeSync(fd);
    }
    const map = Bun.mmap(path, { shared: true });
    const r = new Ring(path, map, size, true);
    Atomics.store(r.ctl, W_PID, process.pid);
    Atomics.store(r.ctl, W_SIZE, size);
    Atomics.store(r.ctl, W_READER_SLEEPS, 1);
    Atomics.store(r.ctl, W_MAGIC, MAGIC);
    return r;
  }

  /** Maps a segment a peer created (the consumer's side). */
  static open(path: string): Ring {
    const map = Bun.mmap(path, { shared: true });
    const ctl = new Int32Array(map.buffer as ArrayBuffer, map.byteOffset, CONTROL / 4);
    const size = Atomics.load(ctl, W_SIZE);
    if (Atomics.load(ctl, W_MAGIC) !== MAGIC || map.length !== CONTROL + size) throw new Error(`${path} is not an ebb/comm ring`);
    return new Ring(path, map, size, false);
  }

  /** The pid of the process that created the segment. */
  get owner(): number {
    return Atomics.load(this.ctl, W_PID);
  }

  unlink(): void {
    try {
      fs().unlinkSync(this.path);
    } catch {}
  }

  // ---- producer ----

  /** Bytes that can be written now, or at least as many as `need` if there are (see headSeen). */
  free(need = 1): number {
    const f = this.size - ((this.pos - this.headSeen) >>> 0);
    if (f >= need) return f;
    this.headSeen = Atomics.load(this.ctl, W_HEAD) >>> 0;
    return this.size - ((this.pos - this.headSeen) >>> 0);
  }

  /**
   * Copies as much of `src` as fits and makes it visible, STEP bytes at a time so the consumer
   * can copy out the first part while we copy in the next; returns the count.
   */
  write(src: Uint8Array): number {
    const n = Math.min(src.length, this.free(src.length));
    if (n === 0) return 0;
    if (n <= 32) {
      const d = this.data;
      const m = this.mask;
      for (let i = 0; i < n; i++) d[(this.pos + i) & m] = src[i]!;
      this.pos = (this.pos + n) >>> 0;
    } else {
      for (let done = 0; done < n; ) {
        const at = this.pos & this.mask;
        const k = Math.min(n - done, this.size - at, STEP);
        this.data.set(k === src.length ? src : src.subarray(done, done + k), at);
        done += k;
        this.pos = (this.pos + k) >>> 0;
        if (done < n) Atomics.store(this.ctl, W_TAIL, this.pos | 0);
      }
    }
    Atomics.store(this.ctl, W_TAIL, this.pos | 0);
    return n;
  }

  /** Copies all of `src` (the caller made sure it fits: free()) without making it visible yet: commit() does. */
  put(src: Uint8Array): void {
    const n = src.length;
    const d = this.data;
    const at = this.pos & this.mask;
    if (n <= 64) {
      const m = this.mask;
      for (let i = 0; i < n; i++) d[(at + i) & m] = src[i]!;
    } else if (at + n <= this.size) d.set(src, at);
    else {
      const k = this.size - at;
      d.set(src.subarray(0, k), at);
      d.set(src.subarray(k), 0);
    }
    this.pos = (this.pos + n) >>> 0;
  }

  /**
   * Like put() for `n` bytes the caller writes itself into `bytes`: the offset of `n` contiguous
   * bytes at the tail (counted as written), or -1 if the ring wraps within them (then put() them).
   */
  reserve(n: number): number {
    const at = this.pos & this.mask;
    if (at + n > this.size) return -1;
    this.pos = (this.pos + n) >>> 0;
    return at;
  }

  /** The ring's memory (for reserve()). */
  get bytes(): Uint8Array {
    return this.data;
  }

  /** Makes what put() copied visible to the consumer. */
  commit(): void {
    Atomics.store(this.ctl, W_TAIL, this.pos | 0);
  }

  /** After a batch of writes: true if the consumer asked for a bell. */
  publish(): boolean {
    return Atomics.load(this.ctl, W_READER_SLEEPS) === 1 && Atomics.exchange(this.ctl, W_READER_SLEEPS, 0) === 1;
  }

  /** The producer waits for space: flag it, then look again. True if there is space after all. */
  writerSleep(): boolean {
    Atomics.exchange(this.ctl, W_WRITER_SLEEPS, 1);
    return this.free() > 0;
  }

  // ---- consumer ----

  /** Bytes waiting to be read. */
  available(): number {
    return ((Atomics.load(this.ctl, W_TAIL) >>> 0) - this.pos) >>> 0;
  }

  /**
   * Hands what is waiting to `take` (ranges of the ring's memory, valid only during the call),
   * freeing it STEP bytes at a time so the producer can refill while we copy out. Returns the bytes
   * read; after a read of any, `freed()` says whether the producer asked for a bell.
   */
  read(take: (ring: Uint8Array, start: number, end: number) => void): number {
    let total = 0;
    for (let n = this.available(); n > 0; n = this.available()) {
      const at = this.pos & this.mask;
      const k = Math.min(n, this.size - at, STEP);
      take(this.data, at, at + k);
      this.pos = (this.pos + k) >>> 0;
      total += k;
      Atomics.store(this.ctl, W_HEAD, this.pos | 0);
    }
    return total;
  }

  /** After a read: true if the producer waits for space and asked for a bell. */
  freed(): boolean {
    return Atomics.load(this.ctl, W_WRITER_SLEEPS) === 1 && Atomics.exchange(this.ctl, W_WRITER_SLEEPS, 0) === 1;
  }

  /** The consumer stops polling: flag it, then look again. True if data came meanwhile. */
  readerSleep(): boolean {
    Atomics.exchange(this.ctl, W_READER_SLEEPS, 1);
    return this.available() > 0;
  }

  /** The consumer polls again: no bells needed. */
  readerWake(): void {
    if (Atomics.load(this.ctl, W_READER_SLEEPS) !== 0) Atomics.store(this.ctl, W_READER_SLEEPS, 0);
  }
}
