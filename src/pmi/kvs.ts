import { KVS_KEY_COST, KVS_MAX_BYTES, KVS_MAX_KEYS, USER_KVS_MAX_BYTES } from "./limits.ts";

const encoder = new TextEncoder();
const scratch = new Uint8Array(4096);

/** UTF-8 bytes of a string, without allocating for the short strings PMI carries. */
export function utf8Bytes(s: string): number {
  if (s.length * 3 <= scratch.length) return encoder.encodeInto(s, scratch).written;
  return encoder.encode(s).length;
}

/** Bytes a key and its value count for against KVS_MAX_BYTES. */
export const entryBytes = (key: string, value: string): number => utf8Bytes(key) + utf8Bytes(value);

/** A size of a step's key-value space: keys, and bytes of keys and values. */
export interface KvsSize {
  keys: number;
  bytes: number;
}

/** Why a key-value space of this size is over the per-step caps, or undefined. The text names the cap, for the rank's error reply and the agent's log. */
export function kvsCapExceeded(size: KvsSize): string | undefined {
  if (size.keys > KVS_MAX_KEYS) return `PMI KVS full: a step holds at most ${KVS_MAX_KEYS} keys (ebb's per-step cap KVS_MAX_KEYS)`;
  if (size.bytes > KVS_MAX_BYTES) return `PMI KVS full: a step holds at most ${KVS_MAX_BYTES} bytes of keys and values (ebb's per-step cap KVS_MAX_BYTES)`;
  return undefined;
}

/** What a KVS of this size counts against its user's share on the node (USER_KVS_MAX_BYTES). */
export const userKvsCost = (size: KvsSize): number => size.bytes + size.keys * KVS_KEY_COST;

/** The refusal past a user's share (its `max`, USER_KVS_MAX_BYTES in the agent). */
export const userKvsFull = (max = USER_KVS_MAX_BYTES): string =>
  `PMI KVS full: one user's steps on a node hold at most ${max} bytes of keys and values together, each key counting ${KVS_KEY_COST} more (ebb's per-user cap USER_KVS_MAX_BYTES)`;

/** A map of PMI keys to values that counts its keys and bytes, so that they can be capped. */
export class CountedKvs implements KvsSize {
  private readonly map = new Map<string, string>();
  private total = 0;

  get keys(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.total;
  }

  get(key: string): string | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  /** What `set(key, value)` adds: a key (0 or 1) and bytes (fewer than none when a value shrinks). */
  private growth(key: string, value: string): KvsSize {
    const old = this.map.get(key);
    return old === undefined ? { keys: 1, bytes: entryBytes(key, value) } : { keys: 0, bytes: utf8Bytes(value) - utf8Bytes(old) };
  }

  /** The size after `set(key, value)`, without setting it. */
  sizeWith(key: string, value: string, base: KvsSize = this): KvsSize {
    const g = this.growth(key, value);
    return { keys: base.keys + g.keys, bytes: base.bytes + g.bytes };
  }

  set(key: string, value: string): void {
    this.total += this.growth(key, value).bytes;
    this.map.set(key, value);
  }

  /** The size after setting every entry of `entries`, without setting them. */
  sizeWithAll(entries: Readonly<Record<string, string>>, base: KvsSize = this): KvsSize {
    let { keys, bytes } = base;
    for (const [k, v] of Object.entries(entries)) {
      const g = this.growth(k, v);
      keys += g.keys;
      bytes += g.bytes;
    }
    return { keys, bytes };
  }

  /** The entries as a plain object (own properties, even for a key like `__proto__`). */
  toRecord(): Record<string, string> {
    return Object.fromEntries(this.map);
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }
}
