import { expect, test } from "bun:test";
import { JsonTooDeep, MAX_JSON_DEPTH, nestedDeeper, parseJson } from "../../src/util/json.ts";

const nest = (n: number) => "[".repeat(n) + "]".repeat(n);

test("nesting up to the limit parses; one level more is refused without parsing, open or closed", () => {
  expect(parseJson(nest(MAX_JSON_DEPTH))).toBeArray();
  expect(() => parseJson(nest(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeep);
  expect(() => parseJson("[".repeat(1 << 20))).toThrow(`JSON nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`);
  expect(nestedDeeper(`{"a":${nest(3)}}`, 3)).toBe(true);
  expect(nestedDeeper(`[{"a":[{"b":[]}]}]`, 5)).toBe(false);
  expect(nestedDeeper(`[{"a":[{"b":[]}]}]`, 4)).toBe(true);
});

test("brackets inside strings do not count, escaped quotes included", () => {
  const text = JSON.stringify({ name: "[".repeat(100), quoted: 'say \\"[[[[\\" and "{{{{"', end: "\\" });
  expect(nestedDeeper(text, 1)).toBe(false);
  expect(parseJson(text, 1)).toEqual(JSON.parse(text));
  expect(nestedDeeper(`["\\\\", ${nest(3)}]`, 3)).toBe(true);
});

test("text not longer than the limit is not scanned, and what is not JSON is JSON.parse's to refuse", () => {
  expect(nestedDeeper("[[[", 3)).toBe(false);
  expect(() => parseJson('["unterminated', 2)).toThrow(SyntaxError);
});
