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
 * Answers one user may have open that are not yet read to their end (every token acting for that
 * user counts): job listings, and other answers longer than CHUNK (a job, the timeline, the
 * priorities of a long queue: 2.9 MB for 20,000 jobs). An answer its client does not read stays
 * with the controller: measured, 100 unread listings of one token grew it by 175 MB, 200 unread
 * priorities by 340 MB, and nothing but the descriptor limit bounded their number. One that is
 * read ends in milliseconds to a second, so this many at once is far more than clients need.
 */
export const UNREAD_PER_USER = 64;

export const unreadSlots = (perUser = UNREAD_PER_USER) =>
  new UserSlots(perUser, (user, n) => new Refusal("too_many", "too_many_unread", `${user} has ${n} answers open that are not yet read to their end (job listings, jobs, timelines, priorities), the most one user may; read or close them and try again`));

const JSON_TYPE = { "content-type": "application/json" };

/**
 * `value` as a JSON answer; one longer than CHUNK is sent as the client reads it and holds a slot
 * (`take`) until it is read to its end or the client is gone.
 */
export function slottedJson(c: Context, value: unknown, take: () => () => void, status: 200 | 201 | 202 = 200): Response {
  const text = JSON.stringify(value);
  if (text.length <= CHUNK) return c.body(text, status, JSON_TYPE);
  const release = take();
  const encoder = new TextEncoder();
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (at >= text.length) {
        release();
        ctrl.close();
        return;
      }
      let end = Math.min(at + CHUNK, text.length);
      // Never between the two halves of a surrogate pair: each half alone would encode as U+FFFD.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
      ctrl.enqueue(encoder.encode(text.slice(at, end)));
      at = end;
    },
    cancel() {
      release();
    },
  });
  return c.body(body, status, JSON_TYPE);
}

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
