/** PMI_PORT's peer check against the kernel itself: real connections, one held by another uid. */
import { expect, test } from "bun:test";
import { createServer } from "node:net";
import { tcpSocketOwner } from "../../src/pmi/sock-diag.ts";
import { loopbackPeerUid } from "../../src/pmi/peer-uid.ts";

test("the kernel names the owner of one socket by its ends (netlink): another user's client end, none for a port nobody holds", async () => {
  const accepted = Promise.withResolvers<{ peer: { address: string; port: number }; local: { address: string; port: number } }>();
  const server = createServer((s) => accepted.resolve({ peer: { address: s.remoteAddress!, port: s.remotePort! }, local: { address: s.localAddress!, port: s.localPort! } }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  // nobody (65534) opens the connection and holds it while it is looked up.
  const client = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port}; sleep 30`]);
  try {
    const { peer, local } = await accepted.promise;
    expect(tcpSocketOwner({ local: peer, remote: local })).toBe(65534);
    // The agent's own accepted end is root's; a port nobody holds is nobody's.
    expect(tcpSocketOwner({ local, remote: peer })).toBe(process.getuid!());
    expect(tcpSocketOwner({ local: { address: "127.0.0.1", port: 1 }, remote: local })).toBeNull();
    expect(loopbackPeerUid(peer, local)).toBe(65534);
  } finally {
    client.kill();
    server.close();
  }
});
