/**
 * A reduction over a node's subtree: for each key, this node's value and one from every child
 * are combined and handed up once. A lost child is no longer waited for.
 */
export class TreeReduce<T> {
  private readonly pending = new Map<string, { local?: T; from: Map<number, T>; sent: boolean }>();
  private readonly lost = new Set<number>();
  private readonly children: number[];

  constructor(
    children: readonly number[],
    private readonly combine: (a: T, b: T) => T,
    private readonly send: (key: string, value: T) => void,
  ) {
    this.children = [...children];
  }

  /** A node re-attached below this one (its parent was lost): it is waited for from now on. */
  adopt(index: number): void {
    if (!this.children.includes(index)) this.children.push(index);
    this.lost.delete(index);
  }

  local(key: string, value: T): void {
    const e = this.entry(key);
    if (e.local !== undefined) return;
    e.local = value;
    this.maybeSend(key);
  }

  child(key: string, index: number, value: T): void {
    const e = this.entry(key);
    if (e.from.has(index)) return;
    e.from.set(index, value);
    this.maybeSend(key);
  }

  childLost(index: number): void {
    this.lost.add(index);
    for (const key of this.pending.keys()) this.maybeSend(key);
  }

  /** Forget keys whose reduction is over (sent), e.g. at the end of an adaptation. */
  clear(): void {
    this.pending.clear();
  }

  private entry(key: string) {
    let e = this.pending.get(key);
    if (!e) this.pending.set(key, (e = { from: new Map(), sent: false }));
    return e;
  }

  private maybeSend(key: string): void {
    const e = this.pending.get(key)!;
    if (e.sent || e.local === undefined) return;
    if (this.children.some((c) => !e.from.has(c) && !this.lost.has(c))) return;
    e.sent = true;
    let value: T = e.local;
    for (const v of e.from.values()) value = this.combine(value, v);
    this.send(key, value);
  }
}
