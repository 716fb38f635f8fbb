import { expect, test } from "bun:test";
import { Hono } from "hono";
import { slottedJson } from "../../src/api/json-stream.ts";

function served(value: unknown) {
  let taken = 0;
  let released = 0;
  const app = new Hono();
  app.get("/", (c) => slottedJson(c, value, () => (taken++, () => released++)));
  return { res: app.request("/"), counts: () => ({ taken, released }) };
}

test("a long answer is sent whole, a surrogate pair at a chunk's edge intact, and its slot is given back once read", async () => {
  // `{"s":"` is 6 characters: the emoji's two halves fall on either side of 65,536.
  const value = { s: "x".repeat((64 << 10) - 7) + "😀" + "y".repeat(100_000) };
  const { res, counts } = served(value);
  expect(counts()).toEqual({ taken: 1, released: 0 });
  expect(await (await res).text()).toBe(JSON.stringify(value));
  expect(counts()).toEqual({ taken: 1, released: 1 });
});

test("a short answer takes no slot", async () => {
  const { res, counts } = served({ ok: true });
  expect(await (await res).json()).toEqual({ ok: true });
  expect(counts()).toEqual({ taken: 0, released: 0 });
});

test("an answer its client stops reading gives its slot back", async () => {
  const { res, counts } = served({ s: "x".repeat(1 << 20) });
  const reader = (await res).body!.getReader();
  await reader.read();
  await reader.cancel();
  expect(counts()).toEqual({ taken: 1, released: 1 });
});
