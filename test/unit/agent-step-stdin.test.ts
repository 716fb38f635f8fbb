/** A node's end of the standard input (agent/step-stdin.ts), on real pipes read by this process. */
import { expect, test } from "bun:test";
import { closeSync } from "node:fs";
import { StepStdin } from "../../src/roles/agent/step-stdin.ts";
import { STDIN_CHUNK, STDIN_WINDOW } from "../../src/proto/step.ts";
import { pipe } from "../../src/util/pipe.ts";

const piece = (n: number, byte: number) => new Uint8Array(n).fill(byte);
/** Waits (at most 10 s) until `done`: the writers need turns of the event loop. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !done(); i++) await Bun.sleep(5);
}

test("every reading rank gets every piece, in order; each piece is acknowledged once all have taken it; eof ends their input", async () => {
  const acks: number[] = [];
  const s = new StepStdin((seq) => acks.push(seq), () => {});
  const ends = [pipe(), pipe()];
  ends.forEach(([, w], rank) => s.add(rank, w));
  const reads = ends.map(([r]) => new Response(Bun.file(r).stream()).bytes());
  s.piece(0, piece(STDIN_CHUNK, 1), false);
  s.piece(1, piece(10, 2), false);
  s.piece(2, new Uint8Array(0), true);
  for (const got of await Promise.all(reads)) expect([...new Set(got)]).toEqual([1, 2]), expect(got.length).toBe(STDIN_CHUNK + 10);
  await until(() => acks.length === 3);
  expect(acks.sort()).toEqual([0, 1, 2]);
  for (const [r] of ends) closeSync(r);
});

test("a rank that closed its input (EPIPE) takes nothing more, and the piece is still acknowledged", async () => {
  const acks: number[] = [];
  const s = new StepStdin((seq) => acks.push(seq), () => {});
  const [r, w] = pipe();
  s.add(0, w);
  closeSync(r);
  s.piece(0, piece(100, 1), false);
  s.piece(1, piece(100, 1), false);
  await until(() => acks.length === 2);
  expect(acks.sort()).toEqual([0, 1]);
});

test("a launcher that sends past the window loses its ranks' input: what the node holds stays bounded", async () => {
  const acks: number[] = [];
  const overruns: string[] = [];
  const s = new StepStdin((seq) => acks.push(seq), (why) => overruns.push(why));
  const [r, w] = pipe();
  s.add(0, w);
  // Nobody reads: the first piece fills the pipe (64 KiB) and is taken; the next ones wait in the writer.
  s.piece(0, piece(STDIN_CHUNK, 1), false);
  await until(() => acks.length === 1);
  for (let seq = 1; seq <= STDIN_WINDOW; seq++) s.piece(seq, piece(STDIN_CHUNK, 1), false);
  expect(overruns).toEqual([]);
  expect(acks).toEqual([0]);
  s.piece(STDIN_WINDOW + 1, piece(STDIN_CHUNK, 1), false);
  expect(overruns).toEqual([`more than ${STDIN_WINDOW} pieces of standard input unacknowledged; the ranks' standard input is closed`]);
  // The reader goes: every piece is acknowledged, nothing is left held.
  closeSync(r);
  await until(() => acks.length === STDIN_WINDOW + 2);
  expect(acks.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
});
