/** A batch script's arguments: any words pass the API's check as they are; `ebb show` quotes them as a shell reads them back. */
import { expect, test } from "bun:test";
import { JobSubmit } from "../../src/proto/requests.ts";
import { shellQuote } from "../../src/util/shell-quote.ts";

test("any words, the empty one, spaces, quotes, $ and tabs included, pass as they are", () => {
  const args = ["config.yaml", "", "two words", `it's "x"`, "$HOME", "tab\there", "-x"];
  expect(JobSubmit.parse({ script: "#!/bin/sh\n", args }).args).toEqual(args);
});

test("shellQuote: plain words as they are, others in single quotes that a shell reads back as the same words", () => {
  const words = ["config.yaml", "--lr=0.1", "two words", "it's", "$HOME", "", "a*b"];
  const text = shellQuote(words);
  expect(text).toBe(`config.yaml --lr=0.1 'two words' 'it'\\''s' '$HOME' '' 'a*b'`);
  const r = Bun.spawnSync(["/bin/sh", "-c", `for w in ${text}; do printf '[%s]' "$w"; done`]);
  expect(r.stdout.toString()).toBe(words.map((w) => `[${w}]`).join(""));
});
