const decoder = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();

export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const byteLength = (s: string): number => encoder.encode(s).length;

/** Bytes received but not yet consumed; limits are counted in bytes, as on the C side. */
export class ByteQueue {
  private buf = new Uint8Array(0);

  get length(): number {
    return this.buf.length;
  }

  push(chunk: Uint8Array | string): void {
    const add = typeof chunk === "string" ? utf8(chunk) : chunk;
    if (add.length === 0) return;
    if (this.buf.length === 0) {
      this.buf = add.slice();
      return;
    }
    const next = new Uint8Array(this.buf.length + add.length);
    next.set(this.buf);
    next.set(add, this.buf.length);
    this.buf = next;
  }

  /**
   * The next line without its `\n`, or undefined if no complete line is buffered yet.
   * Throws when `maxLine` bytes (newline included) pass without a newline.
   */
  takeLine(maxLine: number): string | undefined {
    const limit = Math.min(this.buf.length, maxLine);
    const nl = this.buf.subarray(0, limit).indexOf(0x0a);
    if (nl < 0) {
      if (this.buf.length >= maxLine) throw new RangeError(`line longer than ${maxLine} bytes`);
      return undefined;
    }
    const line = decoder.decode(this.buf.subarray(0, nl));
    this.buf = this.buf.subarray(nl + 1);
    return line;
  }

  /** Peek at the first `n` bytes as text (undefined if fewer are buffered). */
  peek(n: number): string | undefined {
    return this.buf.length < n ? undefined : decoder.decode(this.buf.subarray(0, n));
  }

  take(n: number): string {
    const s = decoder.decode(this.buf.subarray(0, n));
    this.buf = this.buf.subarray(n);
    return s;
  }

  clear(): void {
    this.buf = new Uint8Array(0);
  }
}
