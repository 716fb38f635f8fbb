/**
 * The dashboard: one HTML page (inline script and style, embedded in the binary: no CDN, no
 * separate server) at `/`, and what it reads besides the /v1 API: GET /v1/timeline, and
 * GET /v1/stream, the timeline as server-sent events whenever the cluster changed (checked once a
 * second, so a change shows within 2 s). The page sends the token in a header (fetch, not
 * EventSource), never in a URL. The drawing is SVG by hand: a timeline of nodes × time with
 * rectangles is a few dozen lines, less than wiring a charting library into the binary.
 */
import type { Context, Hono } from "hono";
import html from "./dashboard/index.html" with { type: "text" };
import type { ApiBackend } from "./backend.ts";

// bun-types gives every .html import its full-stack bundle type; with type "text" it is the file's text.
const page = html as unknown as string;

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-cache",
  "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** Seconds between checks for changes; idle streams get a comment every KEEPALIVE checks. */
const TICK_MS = 1000;
const KEEPALIVE = 15;

export function dashboardPage(app: Hono<any>): void {
  app.get("/", (c) => c.body(page, 200, PAGE_HEADERS));
  app.get("/ui", (c) => c.redirect("/", 301));
}

/** The live timeline: an event when the cluster's mark changed since the last one sent. */
export function timelineStream(c: Context, backend: ApiBackend, windowSec: number): Response {
  const enc = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => clearInterval(timer);
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      let last = "";
      let idle = 0;
      const tick = () => {
        try {
          const mark = backend.timelineMark();
          if (mark !== last) {
            last = mark;
            idle = 0;
            ctrl.enqueue(enc.encode(`event: timeline\ndata: ${JSON.stringify(backend.timeline(windowSec))}\n\n`));
          } else if (++idle >= KEEPALIVE) {
            idle = 0;
            ctrl.enqueue(enc.encode(": keep-alive\n\n"));
          }
        } catch {
          stop();
        }
      };
      tick();
      timer = setInterval(tick, TICK_MS);
    },
    cancel: stop,
  });
  c.req.raw.signal.addEventListener("abort", stop);
  return new Response(body, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" } });
}
