/**
 * Communicator contexts, invalidation and the comm-time counter, with two or three transports in
 * this one process (real sockets, no spawning).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Comm,
  CommUsageError,
  InvalidCommError,
  Transport,
  commCallsInFlight,
  commTime,
  contextOf,
  createWorld,
  resetCommTime,
} from "../../src/comm/index.ts";
import { enter, leave, settling } from "../../src/comm/timing.ts";

let open: Transport[] = [];
let dir = "";

function worlds(n: number, generation = 0): Comm[] {
  dir ||= mkdtempSync(join(tmpdir(), "ebbcu-"));
  const ts = Array.from({ length: n }, () => Transport.open({ node: "here", runDir: dir, host: "127.0.0.1" }));
  open.push(...ts);
  return ts.map((t) => createWorld(t, ts.map((x) => x.card), { generation }));
}

afterEach(async () => {
  await Promise.all(open.map((t) => t.close()));
  open = [];
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

describe("contexts", () => {
  test("dup and world traffic with the same source and tag do not mix", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    const [da, db] = await Promise.all([a.dup(), b.dup()]);
    expect(da.ctx).toBe(db.ctx);
    expect(da.ctx).not.toBe(a.ctx);
    await a.send(1, "on dup? no, on world", 3);
    await da.send(1, "on dup", 3);
    expect((await db.recv(0, 3)).data).toBe("on dup");
    expect((await b.recv(0, 3)).data).toBe("on dup? no, on world");
  });

  test("split and dup agree on fresh ids; successive ones differ", async () => {
    const ws = worlds(3);
    const splits = await Promise.all(ws.map((w) => w.split(w.rank === 1 ? 1 : 0)));
    const dups = await Promise.all(ws.map((w) => w.dup()));
    const again = await Promise.all(ws.map((w) => w.dup()));
    expect(new Set(splits.map((s) => s!.ctx)).size).toBe(1);
    expect(new Set(dups.map((s) => s.ctx)).size).toBe(1);
    expect(new Set(again.map((s) => s.ctx)).size).toBe(1);
    const ids = [ws[0]!.ctx, splits[0]!.ctx, dups[0]!.ctx, again[0]!.ctx];
    expect(new Set(ids).size).toBe(4);
    expect(splits.map((s) => [s!.rank, s!.size])).toEqual([
      [0, 2],
      [0, 1],
      [1, 2],
    ]);
  });

  test("a derived communicator on a process that did fewer splits still gets an id free everywhere", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    // a alone takes more ids (splitting a communicator of one), so the counters disagree.
    const solo = createWorld(a.transport, [a.transport.card], { generation: 5 });
    await solo.dup();
    await solo.dup();
    const [da, db] = await Promise.all([a.dup(), b.dup()]);
    expect(da.ctx).toBe(db.ctx);
    expect(da.ctx).toBeGreaterThan(contextOf(5));
  });

  test("concurrent dups of overlapping communicators still get distinct ids", async () => {
    const ws = worlds(3);
    const pair = await Promise.all(ws.map((w) => w.split(w.rank < 2 ? 0 : null)));
    // Same counters everywhere, so both agreements first land on the same id in ranks 0 and 1.
    const [wd, pd] = await Promise.all([Promise.all(ws.map((w) => w.dup())), Promise.all(pair.slice(0, 2).map((p) => p!.dup()))]);
    expect(new Set(wd.map((c) => c.ctx)).size).toBe(1);
    expect(new Set(pd.map((c) => c.ctx)).size).toBe(1);
    expect(wd[0]!.ctx).not.toBe(pd[0]!.ctx);
    const sums = await Promise.all([...wd.map((c) => c.allreduce(1, "sum")), ...pd.map((c) => c.allreduce(10, "sum"))]);
    expect(sums).toEqual([3, 3, 3, 20, 20]);
  });

  test("frames for a communicator not built yet wait for it (a peer got ahead), each with its own header", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    const a1 = createWorld(a.transport, [a.transport.card, b.transport.card], { generation: 1 });
    // Read in one piece from the ring, under the parser's one scratch header: the held frames keep copies.
    for (const tag of [3, 2, 1]) await a1.send(1, `early ${tag}`, tag);
    await a.send(1, "old world", 0);
    expect((await b.recv(0, 0)).data).toBe("old world");
    const b1 = createWorld(b.transport, [a.transport.card, b.transport.card], { generation: 1 });
    for (const tag of [1, 2, 3]) expect((await b1.recv(0, tag)).data).toBe(`early ${tag}`);
  });
});

describe("invalidation", () => {
  test("invalidating a world rejects pending and later operations on it and on everything derived", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    const [sa, sb] = await Promise.all([a.split(0), b.split(0)]);
    const [da] = await Promise.all([a.dup(), b.dup()]);
    const pending = a.recv(1, 9);
    a.invalidate("replaced");
    await expect(pending).rejects.toBeInstanceOf(InvalidCommError);
    await expect(a.barrier()).rejects.toThrow(/world\(g0\) is no longer valid: replaced/);
    await expect(a.send(1, 1)).rejects.toBeInstanceOf(InvalidCommError);
    await expect(sa!.allreduce(1, "sum")).rejects.toBeInstanceOf(InvalidCommError);
    await expect(da.dup()).rejects.toBeInstanceOf(InvalidCommError);
    expect([a.valid, sa!.valid, da.valid]).toEqual([false, false, false]);
    // The other process's communicators are its own business.
    expect([b.valid, sb!.valid]).toEqual([true, true]);
    // A new generation on the same transports works.
    const [a1, b1] = [a, b].map((w) => createWorld(w.transport, [a.transport.card, b.transport.card], { generation: 1 })) as [Comm, Comm];
    const [x, y] = await Promise.all([a1.allreduce(2, "sum"), b1.allreduce(3, "sum")]);
    expect([x, y]).toEqual([5, 5]);
  });

  test("free() retires one communicator; what was derived from it still dies with the world", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    const [sa, sb] = await Promise.all([a.split(0), b.split(0)]);
    const [ssa, ssb] = await Promise.all([sa!.dup(), sb!.dup()]);
    sa!.free();
    await expect(sa!.barrier()).rejects.toThrow(/freed/);
    expect(ssa.valid).toBe(true);
    await Promise.all([ssa.barrier(), ssb.barrier()]);
    a.invalidate("replaced");
    expect(ssa.valid).toBe(false);
  });

  test("usage errors reject instead of throwing", async () => {
    const [a] = worlds(2) as [Comm, Comm];
    await expect(a.send(2, "x")).rejects.toBeInstanceOf(CommUsageError);
    await expect(a.send(1, "x", -1)).rejects.toBeInstanceOf(CommUsageError);
    await expect(a.recv(5)).rejects.toBeInstanceOf(CommUsageError);
    await expect(a.bcast("x", 9)).rejects.toBeInstanceOf(CommUsageError);
    await expect(a.allreduce(1, "avg" as never)).rejects.toBeInstanceOf(CommUsageError);
    await expect(a.alltoall([1])).rejects.toBeInstanceOf(CommUsageError);
    await expect(a.split(0.5)).rejects.toBeInstanceOf(CommUsageError);
    expect(() => createWorld(a.transport, [])).toThrow(CommUsageError);
  });
});

describe("comm time", () => {
  test("counts from call to settlement, overlapping calls once, and resets", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    resetCommTime();
    expect(commTime()).toBe(0);
    const start = Bun.nanoseconds();
    // Two receives outstanding at once; the sends come later, from outside any comm call.
    const r1 = a.recv(1, 1);
    const r2 = a.recv(1, 2);
    expect(commCallsInFlight()).toBe(2);
    await Bun.sleep(5);
    const during = commTime();
    expect(during).toBeGreaterThan(0);
    void b.send(0, "x", 1);
    void b.send(0, "y", 2);
    await Promise.all([r1, r2]);
    const wall = Bun.nanoseconds() - start;
    const counted = commTime();
    expect(commCallsInFlight()).toBe(0);
    expect(counted).toBeGreaterThanOrEqual(during);
    // Overlap counted once: never more than the wall time that contained it all.
    expect(counted).toBeLessThanOrEqual(wall);
    // Outside comm calls the counter stands still.
    await Bun.sleep(2);
    expect(commTime()).toBe(counted);
    expect(resetCommTime()).toBe(counted);
    expect(commTime()).toBe(0);
  });

  test("a call settled while a time is given (a receive's first look at the rings) ends at it, with no clock read; elsewhere at a clock read", () => {
    resetCommTime();
    const t0 = enter();
    settling(t0 + 1000); // settled by a look at the rings that took a time 1 µs after the call's entry
    leave();
    settling(0);
    expect(commTime()).toBe(1000);
    // A time before the call's entry (not given by comm.ts, but never a negative interval).
    const t1 = enter();
    settling(t1 - 5000);
    leave();
    settling(0);
    expect(commTime()).toBeGreaterThanOrEqual(1000);
    resetCommTime();
  });

  test("a small typed array that goes out within the call counts as an instant; other sends from their entry", async () => {
    const [a, b] = worlds(2) as [Comm, Comm];
    await a.send(1, new Uint8Array(8)); // the ring to b is made and announced on the first send
    await b.recv(0, 0);
    resetCommTime();
    for (let i = 0; i < 100; i++) await a.send(1, new Float64Array(4));
    expect(commTime()).toBe(0);
    await a.send(1, { text: "json" });
    expect(commTime()).toBeGreaterThan(0);
  });
});
