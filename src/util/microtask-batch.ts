/**
 * What one run of code sends, handed over together once that code is done (a microtask): many
 * sends in one turn cost one write or one postMessage instead of one each, in the order sent.
 */
export class MicrotaskBatch<T> {
  private items: T[] = [];

  constructor(private readonly deliver: (items: T[]) => void) {}

  push(item: T): void {
    if (this.items.length === 0) queueMicrotask(() => this.flush());
    this.items.push(item);
  }

  /** Hands over what is queued now (before a close, say); the microtask then finds nothing. */
  flush(): void {
    const items = this.items;
    if (items.length === 0) return;
    this.items = [];
    this.deliver(items);
  }
}
