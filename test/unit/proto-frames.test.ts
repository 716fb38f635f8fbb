import { expect, test } from "bun:test";
import { Assembler, ByteBudget, framesOf } from "../../src/proto/frames.ts";

const through = (frames: (string | Uint8Array)[], a: Assembler) => frames.map((f) => a.frame(typeof f === "string" ? f : Buffer.from(f))).filter(Boolean);

test("a text that fits is one frame; a longer one is pieces of its UTF-8 (a character may be cut) and an empty text frame, and comes back whole", () => {
  expect(framesOf("short", 16)).toEqual(["short"]);
  const text = "é".repeat(20) + "x";
  const frames = framesOf(text, 16);
  expect(frames.map((f) => (typeof f === "string" ? `text ${f.length}` : `piece ${f.length}`))).toEqual(["piece 16", "piece 16", "piece 9", "text 0"]);
  expect(through(frames, new Assembler(new ByteBudget(1000), "a test's"))).toEqual([{ text }]);
});

test("pieces past the budget are an error naming it, and what was held is given back; a budget is shared by its connections", () => {
  const budget = new ByteBudget(40);
  const a = new Assembler(budget, "a user's");
  const b = new Assembler(budget, "a user's");
  expect(a.frame(Buffer.alloc(30))).toBeUndefined();
  expect(b.frame(Buffer.alloc(16))).toEqual({ error: "a message over the 40 bytes a user's unfinished messages may hold" });
  expect(budget.used).toBe(30);
  a.drop();
  expect(budget.used).toBe(0);
  expect(b.frame(Buffer.alloc(16))).toBeUndefined();
  expect(b.frame("not empty")).toEqual({ error: "a message's pieces must end with an empty text frame" });
  expect(budget.used).toBe(0);
});
