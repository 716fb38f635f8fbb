/** A binary heap: `before(a, b)` says a pops first. */
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  // Sifting moves a hole and writes the item once where it lands (no swaps: a destructuring swap
  // builds an array each time, and the simulator's event queue sifts on every event).
  push(x: T): void {
    const a = this.items;
    let c = a.length;
    a.push(x);
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (!this.before(x, a[p]!)) break;
      a[c] = a[p]!;
      c = p;
    }
    a[c] = x;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      const n = a.length;
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        const r = l + 1;
        let m = c;
        let mv = last;
        if (l < n && this.before(a[l]!, mv)) {
          m = l;
          mv = a[l]!;
        }
        if (r < n && this.before(a[r]!, mv)) m = r;
        if (m === c) break;
        a[c] = a[m]!;
        c = m;
      }
      a[c] = last;
    }
    return top;
  }
}
