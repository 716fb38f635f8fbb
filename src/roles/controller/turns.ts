/** Long work in steps, with the event loop's other work (heartbeats, requests) between them. */

/** Resolves on the event loop's next turn, after the I/O and timers waiting now. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Each page of `pages` made into `view`, one page per turn of the event loop. */
export async function* pageByPage<T, U>(pages: Iterable<T>, view: (page: T) => U): AsyncGenerator<U> {
  for (const page of pages) {
    yield view(page);
    await nextTurn();
  }
}
