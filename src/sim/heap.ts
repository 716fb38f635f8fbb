/** Binary min-heap of events by (time, seq): same-time events pop in the order they were pushed. */
export interface Event {
  time: number;
  seq: number;
  kind: "arrive" | "end" | "commit" | "point" | "tick";
  job: number;
  version: number;
}

export class EventQueue {
  private readonly items: Event[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(e: Omit<Event, "seq">): void {
    const ev = { ...e, seq: this.seq++ };
    const a = this.items;
    a.push(ev);
    let c = a.length - 1;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (!before(a[c]!, a[p]!)) break;
      [a[c], a[p]] = [a[p]!, a[c]!];
      c = p;
    }
  }

  peek(): Event | undefined {
    return this.items[0];
  }

  pop(): Event | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        const r = l + 1;
        let m = c;
        if (l < a.length && before(a[l]!, a[m]!)) m = l;
        if (r < a.length && before(a[r]!, a[m]!)) m = r;
        if (m === c) break;
        [a[c], a[m]] = [a[m]!, a[c]!];
        c = m;
      }
    }
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}
