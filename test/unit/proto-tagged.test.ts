import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { decode } from "../../src/proto/channel.ts";
import { StepUp } from "../../src/proto/step.ts";
import { tagged } from "../../src/proto/tagged.ts";

describe("tagged unions", () => {
  test("a kind's schema is built at the first message of that kind, and only then", () => {
    const built: string[] = [];
    const U = tagged({
      a: () => (built.push("a"), { n: z.int() }),
      b: () => (built.push("b"), { s: z.string() }),
    });
    expect(built).toEqual([]);
    expect(U.safeParse({ t: "a", n: 1 })).toEqual({ success: true, data: { t: "a", n: 1 } });
    expect(U.safeParse({ t: "a", n: 2 }).success).toBe(true);
    expect(built).toEqual(["a"]);
    expect(U.kinds).toEqual(["a", "b"]);
  });

  test("what is refused names the field and what was expected", () => {
    const U = tagged({ a: () => ({ n: z.int() }), "b.c": () => ({}) });
    const no = (raw: unknown) => {
      const r = U.safeParse(raw);
      if (r.success) throw new Error("accepted");
      return r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(no({ t: "x" })).toEqual(['t: expected one of "a", "b.c"']);
    expect(no({ n: 1 })).toEqual(['t: expected one of "a", "b.c"']);
    expect(no({ t: "toString" })).toEqual(['t: expected one of "a", "b.c"']);
    expect(no([1])).toEqual([": expected an object"]);
    expect(no(null)).toEqual([": expected an object"]);
    expect(no({ t: "a", n: "1" })[0]).toStartWith("n: ");
  });

  test("the step tree's messages decode as before", () => {
    expect(decode(StepUp, JSON.stringify({ t: "exit", step: "3.0", rank: 1, node: "n1", code: 0 }))).toEqual({ ok: true, value: { t: "exit", step: "3.0", rank: 1, node: "n1", code: 0 } });
    expect(decode(StepUp, JSON.stringify({ t: "exit", step: "3", rank: 1, node: "n1", code: 0 }))).toEqual({ ok: false, error: "step: must be JOB.STEP" });
    const refused = decode(StepUp, JSON.stringify({ t: "exited" }));
    expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/^t: expected one of "launched", .*"exit"/) });
  });
});
