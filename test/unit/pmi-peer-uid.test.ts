/** PMI_PORT's peer check: the owner of a connection's client end, read from the kernel's socket table. */
import { expect, test } from "bun:test";
import { socketOwner } from "../../src/pmi/peer-uid.ts";

const HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const row = (local: string, rem: string, st: string, uid: number) => `   0: ${local} ${rem} ${st} 00000000:00000000 00:00000000 00000000  ${uid}        0 1 1 0000 20 4 30 10 -1\n`;
// The listener (port 0x9877 = 39031), the agent's accepted end, and the client's end (port 0xC350 = 50000).
const TABLE = HEAD + row("0100007F:9877", "00000000:0000", "0A", 0) + row("0100007F:9877", "0100007F:C350", "01", 0) + row("0100007F:C350", "0100007F:9877", "01", 1001);

test("the client's end is the line whose local port is the peer's and remote port the listener's", () => {
  expect(socketOwner(TABLE, 50000, 39031)).toBe(1001);
  // Not the agent's own accepted end, nor the listener.
  expect(socketOwner(TABLE, 39031, 50000)).toBe(0);
  expect(socketOwner(TABLE, 39031, 0)).toBe(0);
});

test("no line, or lines of two owners, name nobody", () => {
  expect(socketOwner(TABLE, 50001, 39031)).toBeUndefined();
  expect(socketOwner(HEAD, 50000, 39031)).toBeUndefined();
  const twice = TABLE + row("0200007F:C350", "0100007F:9877", "01", 1002);
  expect(socketOwner(twice, 50000, 39031)).toBeUndefined();
  // The same owner twice (an IPv4 line and a tcp6 one) is still that owner.
  expect(socketOwner(TABLE + row("0000000000000000FFFF00000100007F:C350", "0000000000000000FFFF00000100007F:9877", "01", 1001), 50000, 39031)).toBe(1001);
});
