/** GET /v1/stream's backlog cap (api/dashboard.ts timelineStream), with a timeline source of plain strings. */
import { expect, test } from "bun:test";
import type { Context } from "hono";
import { streamSlots, STREAMS_PER_USER, timelineStream } from "../../src/api/dashboard.ts";
import { statusOf } from "../../src/api/errors.ts";
import type { Refusal } from "../../src/domain/refusal.ts";

function source() {
  const s = { watching: false, push: (_event: "timeline" | "delta", _json: string) => {} };
  const backend = {
    watchTimeline: (_window: number, onEvent: (event: "timeline" | "delta", json: string) => void) => {
      s.watching = true;
      s.push = onEvent;
      return () => {
        s.watching = false;
      };
    },
  };
  const context = { req: { raw: new Request("http://controller/v1/stream") } } as unknown as Context;
  return { s, open: (cap: number, release?: () => void) => timelineStream(context, backend, 3600, cap, release) };
}

test("a client that reads nothing is cut off past the backlog cap: the stream stops watching and says why", async () => {
  const { s, open } = source();
  const res = open(1000);
  s.push("timeline", "x".repeat(600));
  s.push("delta", "y".repeat(600));
  expect(s.watching).toBe(true);
  // 1.2 KB unread: the next event cuts the stream instead of queueing more.
  s.push("delta", "z");
  expect(s.watching).toBe(false);
  await expect(new Response(res.body).text()).rejects.toThrow("the client read nothing of the last 1000 bytes of this stream; closed (reconnect to start again from a whole timeline)");
});

test("a client that keeps reading is never cut, however much passes", async () => {
  const { s, open } = source();
  const reader = open(1000).body!.getReader();
  const dec = new TextDecoder();
  let got = "";
  for (let i = 0; i < 50; i++) {
    s.push("delta", String(i).padStart(600, "."));
    got += dec.decode((await reader.read()).value);
  }
  expect(s.watching).toBe(true);
  expect(got.match(/^event: delta$/gm)?.length).toBe(50);
  await reader.cancel();
  expect(s.watching).toBe(false);
});

test("one user has at most STREAMS_PER_USER streams open; another user is not held back by it; a closed stream gives its slot back", async () => {
  const slots = streamSlots();
  const readers = [];
  for (let i = 0; i < STREAMS_PER_USER; i++) readers.push(source().open(1000, slots.take("alice")).body!.getReader());
  expect(() => slots.take("alice")).toThrow(`alice has ${STREAMS_PER_USER} live timeline streams open, the most one user may; close one (a dashboard tab) and try again`);
  try {
    slots.take("alice");
  } catch (e) {
    expect(statusOf(e as Refusal)).toBe(429);
  }
  const bob = source().open(1000, slots.take("bob")).body!.getReader();
  await readers.pop()!.cancel();
  const again = source().open(1000, slots.take("alice")).body!.getReader();
  expect(() => slots.take("alice")).toThrow("the most one user may");
  for (const r of [...readers, again, bob]) await r.cancel();
  // Every slot is back: a release runs once however the stream stops.
  for (let i = 0; i < STREAMS_PER_USER; i++) slots.take("alice");
});
