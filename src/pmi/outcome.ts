/** What handling one request leads to. Handlers never throw for bad input; they answer with an error reply. */
export interface Outcome {
  /** Bytes to send back (one reply, or the 4-line initack). */
  reply?: string;
  /** Close the connection after the reply (abort). */
  close?: boolean;
  /** The client finished cleanly (finalize). */
  finalized?: boolean;
  /** Switch the connection to the PMI-2 framing after this reply. */
  wire?: 2;
  /** Unrecoverable: report as a protocol error and close. */
  fail?: string;
}

export type Result = Outcome | Promise<Outcome>;

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** An own property even for keys like `__proto__` (keys come off the wire). */
export function setOwn(obj: Record<string, string>, key: string, value: string): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
