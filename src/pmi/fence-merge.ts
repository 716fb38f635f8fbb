/**
 * One fence's puts as they are merged on the way up the step tree (an agent with children, the
 * launcher's root), counted as they come: past a per-step cap the merged result would be refused
 * on every node anyway, so it is dropped at once and only the refusal goes on. Before, a tree node
 * held its whole subtree's puts, each node's up to KVS_MAX_BYTES (16 MiB), before anyone checked.
 * Lengths are UTF-16 units: never more than the UTF-8 bytes the caps count, and what a string holds.
 */
import { kvsCapExceeded } from "./kvs.ts";

export class FenceMerge {
  kvs: Record<string, string> = {};
  /** Why the merged puts are refused (a cap passed here or below); then `kvs` is empty. */
  error: string | undefined;
  private keys = 0;
  private units = 0;

  /** `puts` is the merge's own from then on (a message's, a fresh record): the first is kept as it is, not copied (65,535 keys: ~300 ms). */
  add(puts: Record<string, string>, error?: string): void {
    if (error) this.refuse(error);
    if (this.error) return;
    if (this.keys === 0) return this.adopt(puts);
    for (const [k, v] of Object.entries(puts)) {
      const old = Object.hasOwn(this.kvs, k) ? this.kvs[k] : undefined;
      if (old === undefined) {
        this.keys++;
        this.units += k.length + v.length;
      } else this.units += v.length - old.length;
      this.kvs[k] = v;
    }
    this.check();
  }

  private adopt(puts: Record<string, string>): void {
    this.kvs = puts;
    for (const k in puts) {
      this.keys++;
      this.units += k.length + puts[k]!.length;
    }
    this.check();
  }

  private check(): void {
    const why = kvsCapExceeded({ keys: this.keys, bytes: this.units });
    if (why) this.refuse(why);
  }

  private refuse(why: string): void {
    this.error ??= why;
    this.kvs = {};
  }
}
