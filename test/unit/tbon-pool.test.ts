/**
 * PeerPool's in-process edges: what `ebb up`'s agents share (AgentOptions.peers), so that a launch
 * passes from agent to agent without a socket; an endpoint removed is reached by socket again.
 */
import { expect, test } from "bun:test";
import type { StepDown, StepUp } from "../../src/proto/step.ts";
import { inTurn, LocalPeer, PeerPool, type StepEndpoint, type Upstream } from "../../src/tbon/pool.ts";

/** An endpoint that records what it is given and answers every message with `launched`. */
function endpoint(seen: StepDown[]): StepEndpoint {
  return {
    attach: (up: Upstream) => ({
      deliver: (msg) => {
        seen.push(msg);
        up.send({ t: "launched", step: msg.step, count: 1 });
      },
      closed: () => {},
    }),
  };
}

test("endpoints added to one pool reach each other in-process, each message delivered as sent and answered upward", async () => {
  const pool = new PeerPool();
  const a: StepDown[] = [];
  const b: StepDown[] = [];
  pool.addLocal("127.0.0.1:1", endpoint(a));
  pool.addLocal("127.0.0.1:2", endpoint(b));
  const conn = pool.get("127.0.0.1:2");
  const up = new Promise<StepUp>((resolve) => conn.subscribe("1.0", { onUp: resolve, onLost: () => {} }));
  conn.send({ t: "end", step: "1.0" });
  expect(pool.get("127.0.0.1:2")).toBe(conn);
  expect(await up).toEqual({ t: "launched", step: "1.0", count: 1 });
  expect(b).toEqual([{ t: "end", step: "1.0" }]);
  expect(a).toEqual([]);
  pool.close();
});

test("in-process deliveries run in the order sent, each in a turn of the event loop of its own (timers run in between)", async () => {
  const order: string[] = [];
  const timer = new Promise<void>((resolve) => setTimeout(() => (order.push("timer"), resolve()), 0));
  // Each task holds the thread for 5 ms: as one batch they would all run before the timer.
  const busy = () => {
    const t = performance.now();
    while (performance.now() - t < 5);
  };
  const done = new Promise<void>((resolve) => {
    for (let i = 0; i < 20; i++) inTurn(() => (busy(), order.push(`task ${i}`), i === 19 && resolve()));
  });
  await Promise.all([timer, done]);
  expect(order.filter((o) => o.startsWith("task"))).toEqual(Array.from({ length: 20 }, (_, i) => `task ${i}`));
  expect(order.indexOf("timer")).toBeLessThan(order.length - 1);
});

test("a local edge given its own delivery (an agent's edge to itself: microtasks) delivers both ways in the order sent, before the loop's next turn", async () => {
  const seen: StepDown[] = [];
  const answers: StepUp[] = [];
  const own = new LocalPeer(endpoint(seen), queueMicrotask);
  own.subscribe("1.0", { onUp: (m) => answers.push(m), onLost: () => {} });
  const nextTurn = new Promise<[StepDown[], StepUp[]]>((resolve) => setImmediate(() => resolve([[...seen], [...answers]])));
  own.send({ t: "signal", step: "1.0", signal: "SIGTERM" });
  own.send({ t: "end", step: "1.0" });
  expect(seen).toEqual([]);
  expect(await nextTurn).toEqual([
    [
      { t: "signal", step: "1.0", signal: "SIGTERM" },
      { t: "end", step: "1.0" },
    ],
    [
      { t: "launched", step: "1.0", count: 1 },
      { t: "launched", step: "1.0", count: 1 },
    ],
  ]);
});

test("a queue that never drains keeps its order while it drops what it ran", async () => {
  const ran: number[] = [];
  let queued = 0;
  const done = new Promise<void>((resolve) => {
    const queue = () => {
      const id = queued++;
      inTurn(() => {
        ran.push(id);
        // Each of the first 3,000 queues one more: the queue holds ~2,000 until the end.
        if (queued < 5000) queue();
        if (ran.length === 5000) resolve();
      });
    };
    while (queued < 2000) queue();
  });
  await done;
  expect(ran).toEqual(Array.from({ length: 5000 }, (_, i) => i));
});

test("an endpoint removed from the pool (its agent stopped) is reached by socket again, and its loss is heard", async () => {
  const pool = new PeerPool();
  const seen: StepDown[] = [];
  // A port nothing listens on: the socket edge fails, and the step hears it lost.
  pool.addLocal("127.0.0.1:9", endpoint(seen));
  pool.removeLocal("127.0.0.1:9");
  const conn = pool.get("127.0.0.1:9");
  const lost = new Promise<string>((resolve) => conn.subscribe("1.0", { onUp: () => {}, onLost: resolve }));
  conn.send({ t: "end", step: "1.0" });
  expect(await lost).toContain("connection to 127.0.0.1:9 lost");
  expect(seen).toEqual([]);
  pool.close();
});
