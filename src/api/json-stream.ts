/**
 * A JSON listing, `{"<key>":[...]}`, sent as the client reads it, about CHUNK characters at a
 * time with a turn of the event loop between: a long listing (a job's view carries its argv, up to
 * 1 MiB) neither holds the controller's loop for its whole length nor sits whole in its memory.
 */
import type { Context } from "hono";

const CHUNK = 64 << 10;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `{"<key>": [every page's items], ...tail}`: `tail` holds what is known before the listing starts. */
export function jsonPages(c: Context, key: string, pages: AsyncIterable<readonly unknown[]>, tail: Record<string, unknown> = {}): Response {
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
        const r = await it.next();
        if (r.done) {
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
      await it.return?.();
    },
  });
  return c.body(body, 200, { "content-type": "application/json" });
}
