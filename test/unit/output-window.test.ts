/** The output windows (docs/output.md): an agent's pumps wait for room; the launcher acknowledges what it wrote. */
import { expect, test } from "bun:test";
import { OutputWindow } from "../../src/roles/agent/output-window.ts";
import { OutputAcks } from "../../src/roles/launcher/output-acks.ts";
import { OUTPUT_ACK_EVERY } from "../../src/proto/step.ts";
import type { StepDown } from "../../src/proto/step.ts";
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

test("the launcher acknowledges each node's output OUTPUT_ACK_EVERY at a time, on the edge it came up", () => {
  const a: StepDown[] = [];
  const b: StepDown[] = [];
  const acks = new OutputAcks("1.0");
  acks.written(3, OUTPUT_ACK_EVERY - 1, conn(a));
  acks.written(4, 10, conn(b));
  expect(a).toEqual([]);
  acks.written(3, 1, conn(a));
  expect(a).toEqual([{ t: "io.ack", step: "1.0", node: 3, chars: OUTPUT_ACK_EVERY }]);
  acks.written(4, OUTPUT_ACK_EVERY, conn(b));
  expect(b).toEqual([{ t: "io.ack", step: "1.0", node: 4, chars: OUTPUT_ACK_EVERY + 10 }]);
});

test("output the sink still holds is acknowledged only once it has drained", async () => {
  const sent: StepDown[] = [];
  let drain: (() => void) | undefined;
  const acks = new OutputAcks("1.0", () => (drain ? undefined : new Promise<void>((r) => (drain = r))));
  acks.written(0, OUTPUT_ACK_EVERY, conn(sent));
  expect(sent).toEqual([]);
  drain!();
  await Bun.sleep(0);
  expect(sent).toEqual([{ t: "io.ack", step: "1.0", node: 0, chars: OUTPUT_ACK_EVERY }]);
});
