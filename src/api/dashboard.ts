/**
 * The dashboard: one HTML page (inline script and style, embedded in the binary: no CDN, no
 * separate server) at `/`, whose Content-Security-Policy lets only that script run (by its
 * sha256; no 'unsafe-inline' for scripts, so an injected script or event attribute does not), and what it reads besides the /v1 API: GET /v1/timeline, and
 * GET /v1/stream, the timeline as server-sent events: the whole window first, then deltas
 * whenever the cluster changed (at most one every 1.5 s, so a change shows within 2 s). The page
 * sends the token in a header (fetch, not EventSource), never in a URL. The timeline is drawn by
 * hand on a canvas (a timeline of nodes × time with rectangles is a few dozen lines, less than
 * wiring a charting library into the binary); it was SVG, one element per stretch, which cost
 * the watching browser more CPU than the cluster could spare (bench/throughput, watched). The
 * small charts (utilization, MTCT) stay SVG.
 */
import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";
import html from "./dashboard/index.html" with { type: "text" };
import type { ApiBackend } from "./backend.ts";
import { UserSlots } from "../domain/user-slots.ts";
import { Refusal } from "../domain/refusal.ts";

// bun-types gives every .html import its full-stack bundle type; with type "text" it is the file's text.
const page = html as unknown as string;

/** The page's own scripts, each allowed by its hash (CSP Level 2 hash-source). */
const scriptHashes = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`);

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-cache",
  "content-security-policy": `default-src 'none'; script-src ${scriptHashes.join(" ")}; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** Idle streams get a comment this often (ms), so that proxies keep them open. */
const KEEPALIVE_MS = 15_000;
/**
 * What a stream may hold that its client has not read (bytes): several whole timelines of a large
 * cluster. A client that reads no further (or opened many streams and reads none) is cut off
 * there, and the controller's memory with it; the page reconnects and starts from a whole timeline.
 */
export const STREAM_BACKLOG_MAX = 32 << 20;
/**
 * Streams one user may have open at once (every token acting for that user counts: theirs, their
 * jobs'): each may hold STREAM_BACKLOG_MAX, so many unread ones would be the controller's memory.
 */
export const STREAMS_PER_USER = 8;

/** Who has how many timeline streams open. */
export const streamSlots = (perUser = STREAMS_PER_USER) =>
  new UserSlots(perUser, (user, n) => new Refusal("too_many", "too_many_streams", `${user} has ${n} live timeline streams open, the most one user may; close one (a dashboard tab) and try again`));

export function dashboardPage(app: Hono<any>): void {
  app.get("/", (c) => c.body(page, 200, PAGE_HEADERS));
  app.get("/ui", (c) => c.redirect("/", 301));
}

/**
 * The live timeline: the window's whole timeline as one `timeline` event, then a `delta` event
 * (the jobs that changed) whenever the cluster changed. The controller computes each delta once
 * for all open streams.
 */
export function timelineStream(c: Context, backend: Pick<ApiBackend, "watchTimeline">, windowSec: number, backlogMax = STREAM_BACKLOG_MAX, release = () => {}): Response {
  const enc = new TextEncoder();
  let unsubscribe: (() => void) | undefined;
  let keepalive: ReturnType<typeof setInterval> | undefined;
  let quiet = true;
  const stop = () => {
    clearInterval(keepalive);
    unsubscribe?.();
    unsubscribe = undefined;
    release();
  };
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      const write = (text: string) => {
        try {
          // desiredSize is minus the bytes queued (high-water mark 0).
          if ((ctrl.desiredSize ?? 0) < -backlogMax) {
            stop();
            ctrl.error(new Error(`the client read nothing of the last ${backlogMax} bytes of this stream; closed (reconnect to start again from a whole timeline)`));
            return;
          }
          ctrl.enqueue(enc.encode(text));
        } catch {
          stop();
        }
      };
      unsubscribe = backend.watchTimeline(windowSec, (event, json) => {
        quiet = false;
        write(`event: ${event}\ndata: ${json}\n\n`);
      });
      keepalive = setInterval(() => {
        if (quiet) write(": keep-alive\n\n");
        quiet = true;
      }, KEEPALIVE_MS);
    },
    cancel: stop,
  }, new ByteLengthQueuingStrategy({ highWaterMark: 0 }));
  c.req.raw.signal.addEventListener("abort", stop);
  return new Response(body, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" } });
}
