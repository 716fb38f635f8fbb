/** The made-up resize messages an elastic launcher parses ahead (roles/launcher/warm-decode.ts) still parse. */
import { expect, test } from "bun:test";
import { warmResizeDecoding } from "../../src/roles/launcher/warm-decode.ts";

test("every made-up message of a resize parses against today's schemas", () => {
  expect(warmResizeDecoding()).toBe(true);
});
