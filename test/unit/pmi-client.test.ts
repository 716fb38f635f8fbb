import { describe, expect, test } from "bun:test";
import type { PmiRankInfo } from "../../src/pmi/backend.ts";
import { PmiClient, type PmiTransport } from "../../src/pmi/client.ts";
import { PmiConnection, type PmiConnectionOptions } from "../../src/pmi/connection.ts";
import { PmiError } from "../../src/pmi/errors.ts";
import { NodeStepPmi } from "../../src/pmi/node-step.ts";
import { fakeBackend } from "../support/pmi-wire.ts";

/** The TypeScript client against the real server, connected in memory (asynchronously, like a socket). */
function transportTo(opts: PmiConnectionOptions): { transport: PmiTransport; conn: PmiConnection; drop: () => void } {
  let onData: (chunk: Uint8Array | string) => void = () => {};
  let onClose: () => void = () => {};
  const conn = new PmiConnection(
    {
      write: (d) => queueMicrotask(() => onData(d)),
      close: () => queueMicrotask(() => onClose()),
    },
    opts,
  );
  const transport: PmiTransport = {
    write: (d) => queueMicrotask(() => conn.feed(d)),
    close: () => queueMicrotask(() => conn.closed()),
    listen(d, c) {
      onData = d;
      onClose = c;
    },
  };
  return { transport, conn, drop: () => onClose() };
}

const info = (rank: number, size: number): PmiRankInfo => ({
  rank,
  size,
  appnum: 0,
  kvsname: "kvs_11_0",
  jobId: "11.0",
  universeSize: 2 * size,
  spawned: false,
  debug: false,
});

function job(size: number) {
  const names = new Map<string, string>();
  const aborts: Array<[number, number, string]> = [];
  const step = new NodeStepPmi(
    Array.from({ length: size }, (_, r) => info(r, size)),
    {
      exchange: async (p) => p,
      jobAttr: (k) => (k === "PMI_process_mapping" ? `(vector,(0,1,${size}))` : undefined),
      publish: async (s, p) => !names.has(s) && (names.set(s, p), true),
      lookup: async (s) => names.get(s),
      unpublish: async (s) => names.delete(s),
      abort: (rank, code, message) => void aborts.push([rank, code, message]),
      extension: (rank, cmd, args) => (cmd === "ebb-probe" ? Promise.resolve({ rank: String(rank), echo: args.x ?? "" }) : undefined),
    },
  );
  return { step, names, aborts };
}

describe("PmiClient", () => {
  test("init, KVS across ranks with awkward values, fence, job info", async () => {
    const { step } = job(2);
    const [c0, c1] = await Promise.all(
      [0, 1].map((r) => PmiClient.over(transportTo({ backend: step.backend(r) }).transport, { rank: r, size: 2 })),
    );
    if (!c0 || !c1) throw new Error("no clients");
    expect([c0.kvsname, c0.maxes]).toEqual(["kvs_11_0", { kvsnameMax: 256, keylenMax: 64, vallenMax: 1024 }]);
    const awkward = "two words \\ back=slash ünï";
    await c0.put("addr-0", awkward);
    await c1.put("addr-1", "tcp://10.0.0.2:7000");
    expect(await c1.get("addr-0")).toBeUndefined();
    await Promise.all([c0.fence(), c1.fence()]);
    expect(await c1.get("addr-0")).toBe(awkward);
    expect(await c0.get("addr-1")).toBe("tcp://10.0.0.2:7000");
    expect(await c0.get("PMI_process_mapping")).toBe("(vector,(0,1,2))");
    expect(await c0.get("nope")).toBeUndefined();
    expect([await c0.appnum(), await c0.universeSize()]).toEqual([0, 4]);
  });

  test("requests issued together are sent one at a time (lock-step)", async () => {
    const { step } = job(1);
    const c = await PmiClient.over(transportTo({ backend: step.backend(0) }).transport, {});
    await Promise.all(Array.from({ length: 20 }, (_, i) => c.put(`k${i}`, `v${i}`)));
    await c.fence();
    expect(await Promise.all(Array.from({ length: 20 }, (_, i) => c.get(`k${i}`)))).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
  });

  test("pipelined (EBB_PMI_PIPELINE=1): requests go out before earlier ones are answered, replies still match their requests", async () => {
    // Lines sent but not yet answered, at most, as the server sees them.
    const ahead = (pipelined: boolean) => {
      const { step } = job(1);
      const inner = transportTo({ backend: step.backend(0) }).transport;
      const seen = { out: 0, max: 0 };
      const count = (d: Uint8Array | string) => (typeof d === "string" ? d : new TextDecoder().decode(d)).split("\n").length - 1;
      const transport: PmiTransport = {
        write: (d) => {
          seen.out += count(d);
          seen.max = Math.max(seen.max, seen.out);
          inner.write(d);
        },
        close: () => inner.close(),
        listen: (onData, onClose) => inner.listen((d) => ((seen.out -= count(d)), onData(d)), onClose),
      };
      return { seen, client: PmiClient.over(transport, { pipelined }) };
    };
    const p = ahead(true);
    const c = await p.client;
    expect([c.kvsname, c.maxes.vallenMax, p.seen.max]).toEqual(["kvs_11_0", 1024, 3]); // init, get_maxes, get_my_kvsname at once
    await Promise.all([c.put("a", "1"), c.put("b", "2 two"), c.fence()]);
    const got = await Promise.all([c.get("b"), c.get("missing"), c.put("PMI_x", "read-only").catch((e: PmiError) => e.code), c.get("a")]);
    expect(got).toEqual(["2 two", undefined, "rc", "1"]);
    expect(p.seen.max).toBe(4);
    const l = ahead(false);
    const lockstep = await l.client;
    await Promise.all([lockstep.put("a", "1"), lockstep.fence(), lockstep.get("a")]);
    expect(l.seen.max).toBe(1);
  });

  test("name service", async () => {
    const { step } = job(2);
    const [a, b] = await Promise.all([0, 1].map((r) => PmiClient.over(transportTo({ backend: step.backend(r) }).transport, { rank: r })));
    if (!a || !b) throw new Error("no clients");
    expect(await a.publish("ocean", "tcp://n1:1 x")).toBe(true);
    expect(await b.publish("ocean", "other")).toBe(false);
    expect(await b.lookup("ocean")).toBe("tcp://n1:1 x");
    expect(await b.unpublish("ocean")).toBe(true);
    expect(await a.unpublish("ocean")).toBe(false);
    expect(await a.lookup("ocean")).toBeUndefined();
  });

  test("spawn and extension commands", async () => {
    const b = fakeBackend({}, { spawn: async (req) => (req.commands[0]?.execname === "./bad" ? { rc: 5, message: "no nodes left" } : { rc: 0, errcodes: [0, 3] }) });
    const c = await PmiClient.over(transportTo({ backend: b }).transport, {});
    expect(await c.spawn({ commands: [{ execname: "./w", args: ["a b"], maxprocs: 2, info: { wdir: "/x" } }], preput: { k: "v" } })).toEqual([0, 3]);
    expect(b.calls.spawns[0]).toEqual({ commands: [{ execname: "./w", args: ["a b"], maxprocs: 2, info: { wdir: "/x" } }], preput: { k: "v" } });
    const err = await c.spawn({ commands: [{ execname: "./bad", args: [], maxprocs: 1, info: {} }], preput: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(PmiError);
    expect([err.code, err.rc, err.message]).toEqual(["rc", 5, "mcmd=spawn failed: no_nodes_left"]);

    const { step } = job(1);
    const e = await PmiClient.over(transportTo({ backend: step.backend(0) }).transport, {});
    expect(await e.command("ebb-probe", { x: "a b" })).toEqual({ rank: "0", echo: "a b" });
    const unknown = await e.command("ebb-nope").catch((x) => x);
    expect([unknown.code, unknown.message]).toEqual(["rc", "cmd=ebb-nope failed: unknown_command_ebb-nope"]);
  });

  test("bad requests are refused locally and the connection stays usable", async () => {
    const { step } = job(1);
    const c = await PmiClient.over(transportTo({ backend: step.backend(0) }).transport, {});
    const err = await c.put("k", "line\nbreak").catch((e) => e);
    expect([err.code, err.message]).toEqual(["bad_request", "value of value contains a newline or NUL"]);
    expect((await c.put("big", "x".repeat(2000)).catch((e) => e)).code).toBe("bad_request");
    await c.put("k", "ok");
    await c.fence();
    expect(await c.get("k")).toBe("ok");
  });

  test("abort reaches the agent and closes; finalize closes; later calls fail with PmiError", async () => {
    const { step, aborts } = job(2);
    const { transport, conn } = transportTo({ backend: step.backend(1) });
    const c = await PmiClient.over(transport, { rank: 1 });
    c.abort(3, "disk full");
    await Bun.sleep(0);
    expect(aborts).toEqual([[1, 3, "disk full"]]);
    expect(conn.isOpen).toBe(false);
    expect((await c.get("x").catch((e) => e)).code).toBe("closed");

    const b = fakeBackend();
    const d = await PmiClient.over(transportTo({ backend: b }).transport, {});
    await d.finalize();
    expect(b.calls.finalized).toBe(1);
    expect((await d.fence().catch((e) => e)).code).toBe("closed");
  });

  test("a server that goes away fails the pending request", async () => {
    const b = fakeBackend({}, { fence: () => new Promise<void>(() => {}) });
    const { transport, drop } = transportTo({ backend: b });
    const c = await PmiClient.over(transport, {});
    const pending = c.fence();
    await Bun.sleep(0);
    drop();
    const err = await pending.catch((e) => e);
    expect(err).toBeInstanceOf(PmiError);
    expect(err.code).toBe("disconnected");
  });

  test("PMI_PORT: initack tells the client its rank and size", async () => {
    const backends = [fakeBackend({ rank: 0, size: 3 }), fakeBackend({ rank: 1, size: 3 }), fakeBackend({ rank: 2, size: 3 })];
    const c = await PmiClient.over(transportTo({ byId: (id) => backends[id] }).transport, { pmiid: 2 });
    expect([c.rank, c.size, c.debug]).toEqual([2, 3, false]);
    const refused = await PmiClient.over(transportTo({ byId: () => undefined }).transport, { pmiid: 7 }).catch((e) => e);
    expect([refused.code, refused.message]).toEqual(["initack", "PMI server rejected pmiid 7: no_rank_with_pmiid_7"]);
    // Pipelined too: initack is answered before anything goes out behind it.
    const piped = await PmiClient.over(transportTo({ byId: () => undefined }).transport, { pmiid: 7, pipelined: true }).catch((e) => e);
    expect([piped.code, piped.message]).toEqual(["initack", "PMI server rejected pmiid 7: no_rank_with_pmiid_7"]);
    const ok = await PmiClient.over(transportTo({ byId: (id) => backends[id] }).transport, { pmiid: 1, pipelined: true });
    expect([ok.rank, ok.size, ok.kvsname === "" ? "none" : "some"]).toEqual([1, 3, "some"]);
  });

  test("connect() validates its environment", async () => {
    expect((await PmiClient.connect({}).catch((e) => e)).code).toBe("no_pmi");
    const bad = await PmiClient.connect({ PMI_FD: "three" }).catch((e) => e);
    expect([bad.code, bad.message]).toEqual(["bad_env", "PMI environment: PMI_FD: must be a non-negative integer"]);
    expect((await PmiClient.connect({ PMI_PORT: "nohost" }).catch((e) => e)).code).toBe("bad_env");
    const several = await PmiClient.connect({ PMI_RANK: "-1", PMI_SIZE: "4", PMI_PORT: "host:port" }).catch((e) => e);
    expect(several.message).toBe("PMI environment: PMI_RANK: must be a non-negative integer; PMI_PORT: must be host:port");
  });
});
