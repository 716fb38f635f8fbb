/** The output windows (docs/output.md): an agent's pumps wait for room; the launcher acknowledges what it wrote. */
import { expect, test } from "bun:test";
import { OutputWindow } from "../../src/roles/agent/output-window.ts";
import { OutputAcks } from "../../src/roles/launcher/output-acks.ts";
import { OUTPUT_ACK_EVERY } from "../../src/proto/step.ts";
import type { StepDown, StepUp } from "../../src/proto/step.ts";
import { OutputRelay } from "../../src/roles/agent/output-relay.ts";
import type { PeerConn } from "../../src/tbon/pool.ts";

test("a window has room until its limit is outstanding, and again once acknowledgements bring it under", async () => {
  const w = new OutputWindow(100);
  w.sent(99);
  expect(w.room()).toBeUndefined();
  w.sent(10);
  const waiting = w.room()!;
  let woke = false;
  void waiting.then(() => (woke = true));
  w.acked(5);
  await Bun.sleep(0);
  expect(woke).toBe(false);
  w.acked(10);
  await waiting;
  expect(w.room()).toBeUndefined();
});

test("an adoption counts only what is resent; an open window never waits", async () => {
  const w = new OutputWindow(100);
  w.sent(500);
  const waiting = w.room()!;
  w.restart(40);
  await waiting;
  expect(w.room()).toBeUndefined();
  w.sent(100);
  expect(w.room()).toBeDefined();
  w.open();
  expect(w.room()).toBeUndefined();
});

function conn(sent: StepDown[]): PeerConn {
  return { send: (m) => void sent.push(m), subscribe: () => () => {} };
}

test("the launcher acknowledges each edge's output OUTPUT_ACK_EVERY at a time, on that edge", () => {
  const a: StepDown[] = [];
  const b: StepDown[] = [];
  const [ca, cb] = [conn(a), conn(b)];
  const acks = new OutputAcks("1.0");
  acks.written(OUTPUT_ACK_EVERY - 1, ca);
  acks.written(10, cb);
  expect(a).toEqual([]);
  acks.written(1, ca);
  expect(a).toEqual([{ t: "io.ack", step: "1.0", chars: OUTPUT_ACK_EVERY }]);
  acks.written(OUTPUT_ACK_EVERY, cb);
  expect(b).toEqual([{ t: "io.ack", step: "1.0", chars: OUTPUT_ACK_EVERY + 10 }]);
});

test("output the sink still holds is acknowledged only once it has drained", async () => {
  const sent: StepDown[] = [];
  let drain: (() => void) | undefined;
  const acks = new OutputAcks("1.0", () => (drain ? undefined : new Promise<void>((r) => (drain = r))));
  acks.written(OUTPUT_ACK_EVERY, conn(sent));
  expect(sent).toEqual([]);
  drain!();
  await Bun.sleep(0);
  expect(sent).toEqual([{ t: "io.ack", step: "1.0", chars: OUTPUT_ACK_EVERY }]);
});

const io = (data: string): StepUp => ({ t: "io", step: "1.0", rank: 0, fd: 1, data });

test("a relay passes a child's output on as its node's window allows, its later messages behind it, and acknowledges what went up", async () => {
  const w = new OutputWindow(OUTPUT_ACK_EVERY);
  const up: StepUp[] = [];
  const acked: number[] = [];
  const relay = new OutputRelay(w, (m) => up.push(m), (n) => acked.push(n));
  const big = "x".repeat(OUTPUT_ACK_EVERY);
  relay.take(io(big));
  relay.take(io("y"));
  const exit: StepUp = { t: "exit", step: "1.0", rank: 0, node: "n", code: 0 };
  relay.take(exit);
  expect(up).toEqual([io(big)]);
  expect(acked).toEqual([OUTPUT_ACK_EVERY]);
  w.acked(OUTPUT_ACK_EVERY);
  await Bun.sleep(0);
  expect(up).toEqual([io(big), io("y"), exit]);
});
