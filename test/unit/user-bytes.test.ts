/** UserBytes (domain/user-bytes.ts): the one per-user byte counter, refused by a throw (API bodies) or by false (a frame Assembler's share, a step's KVS). */
import { expect, test } from "bun:test";
import { Refusal } from "../../src/domain/refusal.ts";
import { UserBytes } from "../../src/domain/user-bytes.ts";
import { Assembler } from "../../src/proto/frames.ts";

test("each user has his own allowance; take throws the refusal, tryTake and a share answer false, and nothing is taken then", () => {
  const bytes = new UserBytes(100, (user, held, asked) => new Refusal("too_many", "too_many_bytes", `${user} ${held} ${asked}`));
  bytes.take("alice", 60);
  expect(() => bytes.take("alice", 41)).toThrow("alice 60 41");
  expect(bytes.tryTake("alice", 41)).toBe(false);
  expect(bytes.heldBy("alice")).toBe(60);
  const bob = bytes.of("bob");
  expect(bob.take(100)).toBe(true);
  expect(bob.take(1)).toBe(false);
  bob.give(100);
  bytes.give("alice", 60);
  expect([bytes.heldBy("alice"), bytes.heldBy("bob")]).toEqual([0, 0]);
});

test("a user's share shared by his connections' Assemblers: together they hold at most his allowance, and a closed one gives its part back", () => {
  const bytes = new UserBytes(40);
  const a = new Assembler(bytes.of("bob"), "bob's");
  const b = new Assembler(bytes.of("bob"), "bob's");
  const other = new Assembler(bytes.of("alice"), "alice's");
  expect(a.frame(Buffer.alloc(30))).toBeUndefined();
  expect(b.frame(Buffer.alloc(11))).toEqual({ error: "a message over the 40 bytes bob's unfinished messages may hold" });
  expect(other.frame(Buffer.alloc(40))).toBeUndefined();
  a.drop();
  expect(b.frame(Buffer.alloc(40))).toBeUndefined();
  expect(bytes.heldBy("bob")).toBe(40);
});
