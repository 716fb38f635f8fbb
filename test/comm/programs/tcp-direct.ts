/**
 * Rank program (n = 2, on 2 nodes: TCP) for large bodies read straight from the socket (direct.ts).
 *
 *   sizes   every size around the direct-read threshold (EBB_COMM_DIRECT_BYTES, after what Bun's
 *           first read of up to 512 KiB brought) and Bun's read size, up to 8 MiB + 1: receives
 *           posted first (into the caller's buffer — some of them a view inside a larger one — or
 *           not), then both ranks sending each other
 *           everything at once before receiving anything (many outstanding both ways, unexpected,
 *           each side's writes must go on while the other reads a body). Every byte is checked;
 *           the report says how many body bytes the transport read directly.
 *   death   rank 1 (the victim) starts a 64 MiB send to rank 0, which has posted a receive into
 *           its own buffer, then blocks its event loop so the rest never goes out; rank 0 reports
 *           once it has read part of that body directly, the test SIGKILLs the victim, and the
 *           receive must reject with the error a dead peer gives.
 */
import { writeSync } from "node:fs";
import { startWorld } from "../../support/comm-boot.ts";
import { rejection, report } from "../../support/comm-report.ts";

const scenario = process.argv[2];
const { world, done } = await startWorld();
const r = world.rank;
const peer = 1 - r;

const fill = (n: number, seed: number) => {
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = (i * 131 + seed * 7 + (i >>> 8)) & 255;
  return a;
};
const bad = (a: unknown, n: number, seed: number) => {
  if (!(a instanceof Uint8Array) || a.length !== n) return `length ${(a as Uint8Array)?.length} type ${(a as object)?.constructor?.name}`;
  let wrong = 0;
  for (let i = 0; i < n; i++) if (a[i] !== ((i * 131 + seed * 7 + (i >>> 8)) & 255)) wrong++;
  return wrong === 0 ? "" : `${wrong} bytes wrong`;
};

if (scenario === "sizes") {
  const threshold = Number(process.env.EBB_COMM_DIRECT_BYTES ?? 65536);
  const read = 512 * 1024; // what one read of Bun's socket takes at most
  const around = (x: number) => [x - 25, x - 24, x - 1, x, x + 1, x + 23, x + 24, x + 25];
  const sizes = [
    ...new Set(
      [0, 1, 24, ...around(threshold), ...around(read), ...around(read + threshold), ...around(2 * read), 1 << 20, (4 << 20) + 1, 8 << 20, (8 << 20) + 1].filter((x) => x >= 0),
    ),
  ].sort((a, b) => a - b);
  const errors: string[] = [];

  // 1: receives posted first, one message at a time each way; every other one into a buffer of
  // ours, half of those a view 8 bytes into a larger buffer whose edges must stay untouched.
  for (const [i, n] of sizes.entries()) {
    const outer = i % 4 === 0 ? new Uint8Array(n + 16) : undefined;
    const into = outer ? outer.subarray(8, 8 + n) : i % 2 === 0 ? new Uint8Array(n) : undefined;
    const got = world.recv(peer, i, into);
    await world.send(peer, fill(n, i + r), i);
    const m = await got;
    const e = bad(m.data, n, i + peer);
    if (e) errors.push(`posted ${n} B: ${e}`);
    if (into && m.data !== into) errors.push(`posted ${n} B: not received into the given buffer`);
    if (outer && [...outer.subarray(0, 8), ...outer.subarray(8 + n)].some((x) => x !== 0)) errors.push(`posted ${n} B: wrote outside the given view`);
  }
  await world.barrier();

  // 2: everything at once both ways (three rounds of the list), received afterwards in reverse order.
  const tags = [0, 1, 2].flatMap((round) => sizes.map((n, i) => ({ n, tag: 1000 + round * 100 + i, seed: round * 100 + i })));
  const sent = Promise.all(tags.map((t) => world.send(peer, fill(t.n, t.seed + r), t.tag)));
  for (const t of [...tags].reverse()) {
    const e = bad((await world.recv(peer, t.tag)).data, t.n, t.seed + peer);
    if (e) errors.push(`at once ${t.n} B: ${e}`);
  }
  await sent;
  await world.barrier();
  report({ rank: r, sizes: sizes.length, messages: sizes.length + tags.length, errors, direct: world.transport.stats().direct });
  await done();
} else if (scenario === "death") {
  const big = 64 << 20;
  // Large messages first, so the connection is up and the kernel has grown its buffers: the
  // victim's one synchronous write below then puts megabytes on the wire, not a few kilobytes.
  for (let i = 0; i < 4; i++) {
    if (r === 1) await world.send(0, new Uint8Array(8 << 20), 1);
    else await world.recv(1, 1);
  }
  // Rank 0 posts its receive and notes the direct count before the barrier: the victim's frame may
  // arrive with the barrier's last message and be read (directly) before the barrier resolves here.
  const into = r === 0 ? new Uint8Array(big) : undefined;
  const got = r === 0 ? rejection(world.recv(1, 7, into)) : undefined;
  const before = world.transport.stats().direct;
  await world.barrier();
  if (r === 1) {
    void world.send(0, new Uint8Array(big), 7).catch(() => {});
    writeSync(1, `@${JSON.stringify({ blocked: true })}\n`);
    // No await from here on: the rest of the 64 MiB (beyond what the kernel took) never goes out.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  } else {
    while (world.transport.stats().direct === before) await Bun.sleep(5);
    report({ midBody: world.transport.stats().direct });
    report({ recv: await got, after: await rejection(world.recv(1, 8)) });
    await done();
  }
}
