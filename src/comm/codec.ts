/**
 * Binary framing and payload encoding.
 *
 * Every frame is a 24-byte little-endian header followed by `bodyLen` bytes:
 *
 *   0 u32 bodyLen   4 u8 type   5 u8 kind   6 u16 flags   8 u32 ctx   12 i32 src   16 i32 tag   20 u32 seq
 *
 * Typed arrays travel as their raw bytes with the dtype in `kind`; JSON values as UTF-8 JSON.
 * A received body is always copied into a fresh buffer (offset 0), so typed arrays decode as views
 * without a second copy; bundle items are padded to 8 bytes for the same reason.
 */
import { CommUsageError } from "./errors.ts";

export type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float16Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What a message carries: a typed array (raw bytes), a JSON value, or nothing. */
export type Payload = TypedArray | Json | undefined;

/** Several payloads in one frame; only collectives build these (gather, scatter, allgather). */
export class Bundle {
  constructor(readonly items: Payload[]) {}
}

type TypedCtor = {
  new (buffer: ArrayBuffer, byteOffset: number, length: number): TypedArray;
  new (length: number): TypedArray;
  readonly BYTES_PER_ELEMENT: number;
};

/** Index = dtype number on the wire. Append only. */
export const DTYPES: readonly TypedCtor[] = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float16Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
] as unknown as TypedCtor[];

/** SHM: "read my frames from this ring from now on" ({path}); BELL: tag 0 "data in my ring", 1 "space in yours", 2 "I mapped yours". */
export const FrameType = { DATA: 1, HELLO: 2, BYE: 3, DEAD: 4, SHM: 5, BELL: 6 } as const;
export const Kind = { VOID: 0, JSON: 1, LIST: 2, TYPED: 16 } as const;
/** flags bit 0: collective traffic (matched separately from point-to-point). */
export const FLAG_COLL = 1;

export const HEADER_BYTES = 24;
/** Frames up to this size are written as one buffer (one syscall); above it, big parts go out as-is. */
const COALESCE_BYTES = 64 * 1024;

export interface Header {
  bodyLen: number;
  type: number;
  kind: number;
  flags: number;
  ctx: number;
  src: number;
  tag: number;
  seq: number;
}

export interface Encoded {
  kind: number;
  parts: Uint8Array[];
  length: number;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
const EMPTY = new Uint8Array(0);

export function isTypedArray(x: unknown): x is TypedArray {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

const DTYPE_OF = new Map<unknown, number>(DTYPES.map((c, i) => [c, i]));
/** Uint8Array's dtype: a send of bytes skips the map. */
const DTYPE_BYTES = DTYPES.indexOf(Uint8Array as never);

export function dtypeOf(a: TypedArray): number {
  const d = DTYPE_OF.get(a.constructor);
  if (d !== undefined) return d;
  for (let i = 0; i < DTYPES.length; i++) if (a instanceof DTYPES[i]!) return i; // subclasses (Buffer)
  throw new CommUsageError(`unsupported typed array ${a.constructor.name}`);
}

// Hot-path note: for a small typed array created by length, reading `.buffer` makes the engine
// materialize an ArrayBuffer, and `new ArrayBuffer` itself is costly; either costs more than the
// rest of a small send. So frames are plain Uint8Arrays written by hand (no DataView), and a body
// gets its own ArrayBuffer only when it must be viewed as another type.
function bytesOf(a: TypedArray): Uint8Array {
  if (a instanceof Uint8Array) return a;
  return new Uint8Array(a.buffer as ArrayBuffer, a.byteOffset, a.byteLength);
}

function putU32(b: Uint8Array, at: number, v: number): void {
  b[at] = v & 255;
  b[at + 1] = (v >>> 8) & 255;
  b[at + 2] = (v >>> 16) & 255;
  b[at + 3] = (v >>> 24) & 255;
}

function getU32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
}

function getI32(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);
}

/** A zeroed Uint8Array on its own ArrayBuffer (cheap `.buffer`, costly to make). */
function owned(n: number): Uint8Array {
  return new Uint8Array(new ArrayBuffer(n));
}

/** Whether a body of this kind is viewed as something other than bytes once received. */
function needsOwnBuffer(kind: number): boolean {
  return kind === Kind.LIST || (kind >= Kind.TYPED && kind !== Kind.TYPED + 1);
}

const pad8 = (n: number) => (8 - (n & 7)) & 7;

export function encodePayload(p: Payload | Bundle): Encoded {
  if (p === undefined) return { kind: Kind.VOID, parts: [], length: 0 };
  if (isTypedArray(p)) {
    const bytes = bytesOf(p);
    return { kind: Kind.TYPED + dtypeOf(p), parts: [bytes], length: bytes.length };
  }
  if (p instanceof Bundle) {
    const parts: Uint8Array[] = [];
    const head = owned(8);
    putU32(head, 0, p.items.length);
    parts.push(head);
    let length = 8;
    for (const item of p.items) {
      if (item instanceof Bundle) throw new CommUsageError("bundles do not nest");
      const e = encodePayload(item);
      const ih = owned(8);
      ih[0] = e.kind;
      putU32(ih, 4, e.length);
      parts.push(ih, ...e.parts);
      const pad = pad8(e.length);
      if (pad) parts.push(owned(pad));
      length += 8 + e.length + pad;
    }
    return { kind: Kind.LIST, parts, length };
  }
  if (p instanceof ArrayBuffer || p instanceof DataView || p instanceof SharedArrayBuffer) {
    throw new CommUsageError("send a typed array view, not an ArrayBuffer or DataView");
  }
  const text = JSON.stringify(p);
  if (text === undefined) throw new CommUsageError(`cannot encode a ${typeof p} as JSON`);
  const bytes = utf8.encode(text);
  return { kind: Kind.JSON, parts: [bytes], length: bytes.length };
}

const sending: Encoded = { kind: Kind.VOID, parts: [EMPTY], length: 0 };

/**
 * encodePayload for a send that hands the encoding on at once: a typed array's is one shared
 * object (no allocation per message), valid until the next call or sent(). Transport.send reads
 * it during the call only (it copies it to a ring or socket, or into the chunks it queues).
 */
export function encodeForSend(p: Payload | Bundle): Encoded {
  if (!isTypedArray(p)) return encodePayload(p);
  const bytes = bytesOf(p);
  sending.kind = Kind.TYPED + (p.constructor === Uint8Array ? DTYPE_BYTES : dtypeOf(p));
  sending.parts[0] = bytes;
  sending.length = bytes.length;
  return sending;
}

/** The send that used `e` returned: the shared encoding lets go of the caller's array. */
export function sent(e: Encoded): void {
  if (e === sending) sending.parts[0] = EMPTY;
}

/** Decodes a body. `body` must be owned by the caller (views into it are handed out). */
export function decodePayload(kind: number, body: Uint8Array): Payload | Bundle {
  if (kind === Kind.VOID) return undefined;
  if (kind === Kind.JSON) return JSON.parse(fromUtf8.decode(body)) as Json;
  if (kind === Kind.LIST) {
    const count = getU32(body, 0);
    const items: Payload[] = [];
    let off = 8;
    for (let i = 0; i < count; i++) {
      const k = body[off]!;
      const len = getU32(body, off + 4);
      off += 8;
      if (off + len > body.length) throw new Error("truncated bundle");
      items.push(decodePayload(k, body.subarray(off, off + len)) as Payload);
      off += len + pad8(len);
    }
    return new Bundle(items);
  }
  const Ctor = DTYPES[kind - Kind.TYPED];
  if (!Ctor) throw new Error(`unknown payload kind ${kind}`);
  if (Ctor === (Uint8Array as unknown)) return body;
  const size = Ctor.BYTES_PER_ELEMENT;
  if (body.byteLength % size !== 0) throw new Error(`body of ${body.byteLength} B is not a whole number of ${Ctor.name} elements`);
  if (body.byteOffset % size === 0) return new Ctor(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength / size);
  const copy = new Uint8Array(body.byteLength);
  copy.set(body);
  return new Ctor(copy.buffer, 0, body.byteLength / size);
}

/** The header fields a sender chooses (the body's length and kind come from the payload). */
export type FrameHead = Omit<Header, "bodyLen" | "kind">;

/** Writes a frame's header into b[at, at + HEADER_BYTES). */
export function writeHeader(b: Uint8Array, h: FrameHead, bodyLen: number, kind: number, at = 0): void {
  putU32(b, at, bodyLen);
  b[at + 4] = h.type;
  b[at + 5] = kind;
  b[at + 6] = h.flags & 255;
  b[at + 7] = (h.flags >>> 8) & 255;
  putU32(b, at + 8, h.ctx);
  putU32(b, at + 12, h.src);
  putU32(b, at + 16, h.tag);
  putU32(b, at + 20, h.seq);
}

function readHeader(b: Uint8Array, at: number): Header {
  return readHeaderInto({ bodyLen: 0, type: 0, kind: 0, flags: 0, ctx: 0, src: 0, tag: 0, seq: 0 }, b, at);
}

function readHeaderInto(h: Header, b: Uint8Array, at: number): Header {
  h.bodyLen = getU32(b, at);
  h.type = b[at + 4]!;
  h.kind = b[at + 5]!;
  h.flags = b[at + 6]! | (b[at + 7]! << 8);
  h.ctx = getU32(b, at + 8);
  h.src = getI32(b, at + 12);
  h.tag = getI32(b, at + 16);
  h.seq = getU32(b, at + 20);
  return h;
}

/**
 * The byte chunks of one frame, ready for socket.write in order. Small frames become one buffer;
 * large parts (typed-array bodies) are passed through uncopied, small neighbours coalesced.
 */
export function frameChunks(h: FrameHead, payload: Encoded): Uint8Array[] {
  if (payload.length + HEADER_BYTES <= COALESCE_BYTES) {
    const out = new Uint8Array(HEADER_BYTES + payload.length);
    writeHeader(out, h, payload.length, payload.kind);
    let off = HEADER_BYTES;
    for (const p of payload.parts) {
      out.set(p, off);
      off += p.length;
    }
    return [out];
  }
  const out: Uint8Array[] = [];
  const head = new Uint8Array(HEADER_BYTES);
  writeHeader(head, h, payload.length, payload.kind);
  let small: Uint8Array[] = [head];
  let smallLen = HEADER_BYTES;
  const flushSmall = () => {
    if (small.length === 1) out.push(small[0]!);
    else if (small.length > 1) out.push(concat(small, smallLen));
    small = [];
    smallLen = 0;
  };
  for (const p of payload.parts) {
    if (p.length >= 16 * 1024) {
      flushSmall();
      out.push(p);
    } else {
      small.push(p);
      smallLen += p.length;
    }
  }
  flushSmall();
  return out;
}

export function concat(parts: Uint8Array[], length?: number): Uint8Array {
  if (parts.length === 1 && length === undefined) return parts[0]!.slice();
  const out = new Uint8Array(length ?? parts.reduce((a, p) => a + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Bodies at least this big may be read straight into a waiting receive's buffer (see FrameParser). */
export const CLAIM_BYTES = 4096;

/**
 * Takes a whole small frame straight from the chunk it lies in: `h` is the parser's scratch header
 * and the body is chunk[at, at + h.bodyLen); both are valid only during the call. True if it took
 * the frame (it must then not reach onFrame), false to have it parsed as usual.
 */
export type DirectTake = (h: Header, chunk: Uint8Array, at: number) => boolean;

/**
 * Incremental frame reader: push socket chunks in, get (header, body) out. Bodies are fresh
 * buffers owned by the receiver, or, for a body of CLAIM_BYTES or more, the buffer `claim`
 * returns for its header (a waiting receive's own memory), so a large body is copied once. A
 * smaller frame that lies whole in one chunk is first offered to `direct`, which may copy its body
 * where it goes with no header or body object made (a ring's 8 B message into a waiting receive).
 * The header handed to onFrame is valid during the call only: a smaller frame whole in its chunk
 * comes with the parser's scratch header (no object per frame), which the next frame overwrites.
 */
export class FrameParser {
  private readonly hdr = new Uint8Array(HEADER_BYTES);
  private hdrFill = 0;
  private cur: Header | undefined;
  private body: Uint8Array = EMPTY;
  private bodyFill = 0;
  private readonly scratch: Header = { bodyLen: 0, type: 0, kind: 0, flags: 0, ctx: 0, src: 0, tag: 0, seq: 0 };
  /**
   * The longest body taken: a frame that says more throws before any of it is held. An accepted
   * connection has a small one until its HELLO is accepted (transport.ts): a header claiming 1 GiB
   * had a rank allocate it for any process that could connect, and wait for its bytes.
   */
  maxBody = Number.POSITIVE_INFINITY;

  constructor(
    private readonly onFrame: (h: Header, body: Uint8Array) => void,
    private readonly claim?: (h: Header) => Uint8Array | undefined,
    private readonly direct?: DirectTake,
  ) {}

  /** Whether a frame is partly read (its header or body incomplete). */
  get midFrame(): boolean {
    return this.cur !== undefined || this.hdrFill > 0;
  }

  /** Bytes of the current frame's body still to come (0 between bodies). */
  get bodyLeft(): number {
    return this.cur ? this.cur.bodyLen - this.bodyFill : 0;
  }

  /**
   * The current body and how much of it is filled, for a reader that writes the rest in place
   * (direct.ts reads a TCP body straight from the socket); it then calls `filled(n)`.
   */
  get bodyBuffer(): { body: Uint8Array; fill: number } | undefined {
    return this.cur ? { body: this.body, fill: this.bodyFill } : undefined;
  }

  /** `n` more body bytes were written in place; completes the frame when the body is full. */
  filled(n: number): void {
    const h = this.cur;
    if (!h || n > h.bodyLen - this.bodyFill) throw new Error("body overfilled");
    this.bodyFill += n;
    if (this.bodyFill === h.bodyLen) {
      const body = this.body;
      this.cur = undefined;
      this.body = EMPTY;
      this.onFrame(h, body);
    }
  }

  /** Parses `chunk[start..end)` (a range, so a caller reading from a larger buffer need not make a view). */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    let off = start;
    const n = end;
    while (off < n) {
      if (!this.cur) {
        let h: Header;
        if (this.hdrFill === 0 && n - off >= HEADER_BYTES) {
          const s = readHeaderInto(this.scratch, chunk, off);
          const len = s.bodyLen;
          if (len > this.maxBody) throw tooLong(len, this.maxBody);
          if (len < CLAIM_BYTES && n - off - HEADER_BYTES >= len) {
            // Whole in this chunk: taken directly, or its body copied out under the scratch header.
            const at = off + HEADER_BYTES;
            off = at + len;
            if (this.direct?.(s, chunk, at)) continue;
            this.onFrame(s, len === 0 ? EMPTY : copyBody(s.kind, chunk, at, len));
            continue;
          }
          h = readHeader(chunk, off);
          off += HEADER_BYTES;
        } else {
          while (this.hdrFill < HEADER_BYTES && off < n) this.hdr[this.hdrFill++] = chunk[off++]!;
          if (this.hdrFill < HEADER_BYTES) return;
          this.hdrFill = 0;
          h = readHeader(this.hdr, 0);
        }
        if (h.bodyLen > this.maxBody) throw tooLong(h.bodyLen, this.maxBody);
        if (h.bodyLen === 0) {
          this.onFrame(h, EMPTY);
          continue;
        }
        this.cur = h;
        this.body = (h.bodyLen >= CLAIM_BYTES && this.claim?.(h)) || newBody(h.kind, h.bodyLen);
        this.bodyFill = 0;
      }
      const take = Math.min(this.cur.bodyLen - this.bodyFill, n - off);
      copyIn(this.body, this.bodyFill, chunk, off, take);
      this.bodyFill += take;
      off += take;
      if (this.bodyFill === this.cur.bodyLen) {
        const h = this.cur;
        const body = this.body;
        this.cur = undefined;
        this.body = EMPTY;
        this.onFrame(h, body);
      }
    }
  }
}

const tooLong = (len: number, max: number) => new Error(`a frame of ${len} bytes, over the ${max} this connection takes yet`);

/** A buffer for a received body of `kind` (owned by the receiver). */
function newBody(kind: number, len: number): Uint8Array {
  return needsOwnBuffer(kind) ? owned(len) : new Uint8Array(len);
}

/** chunk[at, at + len) into `dst` at `dstAt`: small copies by a loop, a native set() costs more. */
function copyIn(dst: Uint8Array, dstAt: number, chunk: Uint8Array, at: number, len: number): void {
  if (len <= 64) for (let i = 0; i < len; i++) dst[dstAt + i] = chunk[at + i]!;
  else dst.set(chunk.subarray(at, at + len), dstAt);
}

/** A fresh body holding chunk[at, at + len). */
function copyBody(kind: number, chunk: Uint8Array, at: number, len: number): Uint8Array {
  const body = newBody(kind, len);
  copyIn(body, 0, chunk, at, len);
  return body;
}

/** A control frame (no communicator, no sequence) as one buffer. */
export function controlFrame(type: number, body?: unknown, tag = 0): Uint8Array {
  const payload = body === undefined ? { kind: Kind.VOID, parts: [], length: 0 } : encodePayload(body as never);
  return frameChunks({ type, flags: 0, ctx: 0, src: 0, tag, seq: 0 }, payload)[0]!;
}
