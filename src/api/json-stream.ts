/**
 * A JSON listing, `{"<key>":[...]}`, sent page by page as the client reads it: a long listing
 * neither holds the controller's loop for its whole length nor sits whole in its memory.
 */
import type { Context } from "hono";

export function jsonPages(c: Context, key: string, pages: AsyncIterable<readonly unknown[]>): Response {
  const encoder = new TextEncoder();
  const it = pages[Symbol.asyncIterator]();
  let first = true;
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      ctrl.enqueue(encoder.encode(`{${JSON.stringify(key)}:[`));
    },
    async pull(ctrl) {
      const r = await it.next();
      if (r.done) {
        ctrl.enqueue(encoder.encode("]}"));
        ctrl.close();
        return;
      }
      if (r.value.length === 0) return;
      ctrl.enqueue(encoder.encode((first ? "" : ",") + r.value.map((v) => JSON.stringify(v)).join(",")));
      first = false;
    },
    async cancel() {
      await it.return?.();
    },
  });
  return c.body(body, 200, { "content-type": "application/json" });
}
