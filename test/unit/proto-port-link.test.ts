/**
 * The in-process agent link (proto/port-link.ts) on a real MessageChannel: messages both ways,
 * validated by the receiver's schema; the controller's end closing a connection (with the code and
 * reason the agent hears, then a new connection after the backoff) and the agent's end closing it.
 */
import { expect, test } from "bun:test";
import { z } from "zod";
import { PortLinks, PortServer, type PortSession } from "../../src/proto/port-link.ts";

const Msg = z.object({ t: z.literal("ping"), n: z.number() });
type Msg = z.infer<typeof Msg>;

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await Bun.sleep(5);
  expect(ok()).toBe(true);
};

test("carries validated messages both ways; a close by either end reaches the other; the agent's end reconnects", async () => {
  const { port1, port2 } = new MessageChannel();
  const atServer: { s: PortSession; text: string }[] = [];
  const closed: PortSession[] = [];
  const server = new PortServer(port1, { message: (s, text) => atServer.push({ s, text }), close: (s) => closed.push(s) });
  const links = new PortLinks(port2);
  const got: Msg[] = [];
  const invalid: string[] = [];
  const closes: [string, number, number | undefined][] = [];
  let opens = 0;
  const link = links.connect<Msg, Msg>({
    schema: Msg,
    onMessage: (m) => got.push(m),
    onInvalid: (e) => invalid.push(e),
    onOpen: () => opens++,
    onClose: (reason, code, retry) => closes.push([reason, code, retry]),
    reconnect: { maxDelayMs: 1000 },
  });
  link.send({ t: "ping", n: 1 }); // queued until open, as a WebSocket channel's
  await until(() => atServer.length === 1);
  expect(opens).toBe(1);
  expect(JSON.parse(atServer[0]!.text)).toEqual({ t: "ping", n: 1 });
  const first = atServer[0]!.s;
  expect(first.inProcess).toBe(true);
  first.send({ t: "ping", n: 2 });
  first.send({ t: "pong" }); // fails the agent's schema: dropped, said
  await until(() => got.length === 1 && invalid.length === 1);
  expect(got).toEqual([{ t: "ping", n: 2 }]);

  first.close(4409, "name taken");
  await until(() => closes.length === 1 && closed.length === 1);
  expect(closes[0]).toEqual(["name taken", 4409, 100]);
  expect(link.isOpen).toBe(false);
  await until(() => opens === 2);
  link.send({ t: "ping", n: 3 });
  await until(() => atServer.length === 2);
  expect(atServer[1]!.s).not.toBe(first);
  first.send({ t: "ping", n: 99 }); // a closed session's sends go nowhere
  link.close();
  await until(() => closed.length === 2 && closes.length === 2);
  expect(closed[1]).toBe(atServer[1]!.s);
  expect(closes[1]![2]).toBeUndefined();
  expect(got.map((m) => m.n)).toEqual([2]);
  expect(server.size).toBe(0);
  links.close();
  port1.close();
});
