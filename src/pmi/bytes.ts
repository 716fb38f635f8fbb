const decoder = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();

export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const byteLength = (s: string): number => encoder.encode(s).length;

/**
 * Bytes received but not yet consumed; limits are counted in bytes, as on the C side. The buffer
 * grows by doubling and is read from an offset, so a long stream costs linear time, never a copy
 * of everything buffered per chunk.
 */
export class ByteQueue {
  private buf = new Uint8Array(0);
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  private get view(): Uint8Array {
    return this.buf.subarray(this.start, this.end);
  }

  push(chunk: Uint8Array | string): void {
    const add = typeof chunk === "string" ? utf8(chunk) : chunk;
    if (add.length === 0) return;
    if (this.end + add.length > this.buf.length) {
      const need = this.length + add.length;
      if (need <= this.buf.length && this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        const next = new Uint8Array(Math.max(need, this.buf.length * 2, 4096));
        next.set(this.view);
        this.buf = next;
      }
      this.end = this.length;
      this.start = 0;
    }
    this.buf.set(add, this.end);
    this.end += add.length;
  }

  /**
   * The next line without its `\n`, or undefined if no complete line is buffered yet.
   * Throws when `maxLine` bytes (newline included) pass without a newline.
   */
  takeLine(maxLine: number): string | undefined {
    const limit = Math.min(this.length, maxLine);
    const nl = this.buf.subarray(this.start, this.start + limit).indexOf(0x0a);
    if (nl < 0) {
      if (this.length >= maxLine) throw new RangeError(`line longer than ${maxLine} bytes`);
      return undefined;
    }
    const line = decoder.decode(this.buf.subarray(this.start, this.start + nl));
    this.consume(nl + 1);
    return line;
  }

  /** Peek at the first `n` bytes as text (undefined if fewer are buffered). */
  peek(n: number): string | undefined {
    return this.length < n ? undefined : decoder.decode(this.buf.subarray(this.start, this.start + n));
  }

  take(n: number): string {
    const s = decoder.decode(this.buf.subarray(this.start, this.start + Math.min(n, this.length)));
    this.consume(n);
    return s;
  }

  private consume(n: number): void {
    this.start = Math.min(this.end, this.start + n);
    if (this.start === this.end) this.start = this.end = 0;
  }

  clear(): void {
    this.buf = new Uint8Array(0);
    this.start = this.end = 0;
  }
}

/** Bytes waiting to go out, as a queue of chunks: appending never copies what waits already. */
export class ChunkQueue {
  private readonly chunks: Uint8Array[] = [];
  private head = 0;
  private bytes = 0;

  get length(): number {
    return this.bytes;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /** The first waiting chunk (undefined when empty). */
  first(): Uint8Array | undefined {
    return this.chunks[this.head];
  }

  /** `n` bytes of the first chunk went out. */
  advance(n: number): void {
    const c = this.chunks[this.head];
    if (!c || n <= 0) return;
    this.bytes -= Math.min(n, c.length);
    if (n >= c.length) {
      this.chunks[this.head++] = undefined as never;
      if (this.head > 1024 && this.head * 2 > this.chunks.length) {
        this.chunks.splice(0, this.head);
        this.head = 0;
      }
    } else this.chunks[this.head] = c.subarray(n);
  }

  clear(): void {
    this.chunks.length = 0;
    this.head = 0;
    this.bytes = 0;
  }
}
