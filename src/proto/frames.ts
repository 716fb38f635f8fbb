/**
 * Messages larger than a WebSocket frame may be. A server's frame cap (Bun's `maxPayloadLength`) is
 * one for every connection, and uWS holds a frame whole until it ends: with a cap of 64 MiB, anyone
 * who could open a connection could make the daemon hold 64 MiB per connection before saying who
 * they were. So frames are capped small (FRAME_MAX) and a longer message travels in pieces: binary
 * frames, each a slice of its UTF-8 text, ended by an empty text frame. A message that fits is one
 * text frame, as before. The receiver takes pieces only from an authenticated peer, and counts what
 * it holds of unfinished messages against a budget (per user where the peer is a user).
 */
import type { BytesShare } from "../domain/user-bytes.ts";

/** The largest frame a peer may send (and the most anyone may send before authenticating). */
export const FRAME_MAX = 64 << 10;

/** The frames that carry `text`: itself when it fits, else its pieces and an empty text frame. */
export function framesOf(text: string, max = FRAME_MAX): (string | Uint8Array<ArrayBuffer>)[] {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most texts are known to fit without encoding them.
  if (text.length * 3 <= max) return [text];
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return [text];
  const frames: (string | Uint8Array<ArrayBuffer>)[] = [];
  for (let at = 0; at < bytes.length; at += max) frames.push(bytes.subarray(at, at + max));
  frames.push("");
  return frames;
}

/** Bytes held of unfinished messages by one holder (a job's connections, one agent's), shared by the connections it is given to; per user, `UserBytes`. */
export class ByteBudget implements BytesShare {
  private held = 0;
  constructor(readonly max: number) {}

  /** Takes `n` bytes, or says why not. */
  take(n: number): boolean {
    if (this.held + n > this.max) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held -= n;
  }

  get used(): number {
    return this.held;
  }
}

/** One connection's unfinished message. `budget` may be shared with other connections. */
export class Assembler {
  private pieces: Buffer[] = [];
  private size = 0;

  constructor(
    /** What it counts its pieces against: a `ByteBudget`, or a user's share (`UserBytes.of`). */
    private readonly budget: BytesShare,
    /** What the refusal says the budget is: "a user's", "a connection's". */
    private readonly whose: string,
  ) {}

  /**
   * A frame as received: the whole message's text when it ends one, undefined for a piece, or an
   * error (the connection should be closed with it; what was held is given back).
   */
  frame(data: string | Buffer): { text: string } | { error: string } | undefined {
    if (typeof data !== "string") {
      if (!this.budget.take(data.length)) {
        const error = `a message over the ${this.budget.max} bytes ${this.whose} unfinished messages may hold`;
        this.drop();
        return { error };
      }
      this.pieces.push(data);
      this.size += data.length;
      return undefined;
    }
    if (this.pieces.length === 0) return { text: data };
    if (data !== "") {
      this.drop();
      return { error: "a message's pieces must end with an empty text frame" };
    }
    const text = Buffer.concat(this.pieces, this.size).toString("utf8");
    this.drop();
    return { text };
  }

  /** Gives back what is held (the connection closed). */
  drop(): void {
    this.budget.give(this.size);
    this.pieces = [];
    this.size = 0;
  }
}
