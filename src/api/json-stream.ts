/**
 * A JSON listing, `{"<key>":[...]}`, sent as the client reads it, about CHUNK characters at a
 * time with a turn of the event loop between: a long listing (a job's view carries its argv, up to
 * 1 MiB) neither holds the controller's loop for its whole length nor sits whole in its memory.
 */
import type { Context } from "hono";
import { Refusal } from "../domain/refusal.ts";
import { UserSlots } from "../domain/user-slots.ts";

const CHUNK = 64 << 10;

/**
 * Listings one user may have open at once (every token acting for that user counts). A listing
 * its client does not read stays open with what it holds (a page of views and what the socket
 * buffers: ~2-4 MiB for a long one); measured: 100 such of one token grew the controller by
 * 175 MB, and nothing but the descriptor limit bounded their number. A listing that is read ends
 * in milliseconds to a second, so this many at once is far more than `ebb queue`s in parallel need.
 */
export const LISTINGS_PER_USER = 64;

export const listingSlots = (perUser = LISTINGS_PER_USER) =>
  new UserSlots(perUser, (user, n) => new Refusal("too_many", "too_many_listings", `${user} has ${n} job listings open that are not yet read to their end, the most one user may; read or close them and try again`));

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `{"<key>": [every page's items], ...tail}`: `tail` holds what is known before the listing starts;
 * `release` is called once it has ended, been cancelled or failed.
 */
export function jsonPages(c: Context, key: string, pages: AsyncIterable<readonly unknown[]>, tail: Record<string, unknown> = {}, release = () => {}): Response {
  const encoder = new TextEncoder();
  const it = pages[Symbol.asyncIterator]();
  let page: readonly unknown[] = [];
  let at = 0;
  let first = true;
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      ctrl.enqueue(encoder.encode(`{${JSON.stringify(key)}:[`));
    },
    async pull(ctrl) {
      await nextTurn();
      while (at >= page.length) {
        let r: IteratorResult<readonly unknown[]>;
        try {
          r = await it.next();
        } catch (e) {
          release();
          throw e;
        }
        if (r.done) {
          release();
          const rest = JSON.stringify(tail).slice(1, -1);
          ctrl.enqueue(encoder.encode(rest ? `],${rest}}` : "]}"));
          ctrl.close();
          return;
        }
        page = r.value;
        at = 0;
      }
      let text = "";
      while (at < page.length && text.length < CHUNK) {
        text += (first ? "" : ",") + JSON.stringify(page[at++]);
        first = false;
      }
      ctrl.enqueue(encoder.encode(text));
    },
    async cancel() {
      release();
      await it.return?.();
    },
  });
  return c.body(body, 200, { "content-type": "application/json" });
}
