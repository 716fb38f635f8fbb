/** A warm rank's dry run of the wire-up (roles/warm-prewarm.ts) stays inside its process. */
import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { prewarm } from "../../src/roles/warm-prewarm.ts";

test("prewarm runs the PMI client's calls against its stand-in and opens nothing, sets nothing", async () => {
  const fds = readdirSync("/proc/self/fd").length;
  const env = { ...process.env };
  await prewarm();
  await prewarm();
  expect(readdirSync("/proc/self/fd").length).toBe(fds);
  expect(process.env).toEqual(env);
});
