/**
 * Rank program (n = 2, one node): a receive that outlasts the polling budget keeps its process
 * alive with nothing else to do. After an exchange (so the shared-memory rings are up), both close
 * their KVS connections; rank 1 then waits 300 ms on a timer before it sends, while rank 0 has only
 * its pending receive: its polling gives up after 100 µs, and what keeps the process up from then
 * on is the transport, until the message's bell wakes it. The work runs in a function that is not
 * awaited at the top level: Bun keeps a process with a pending top-level await alive by itself.
 */
import { finalize, initWorld } from "../../../src/comm/index.ts";
import { testBootstrap } from "../../support/comm-kvs.ts";
import { report } from "../../support/comm-report.ts";

async function main(): Promise<void> {
  const boot = await testBootstrap();
  const world = await initWorld(boot);
  const peer = 1 - world.rank;
  for (let i = 0; i < 10; i++) {
    if (world.rank === 0) {
      await world.send(peer, i);
      await world.recv(peer);
    } else {
      await world.send(peer, (await world.recv(peer)).data as number);
    }
  }
  boot.kvs.close();
  if (world.rank === 0) {
    report({ got: (await world.recv(peer, 7)).data });
  } else {
    await Bun.sleep(300);
    await world.send(peer, "late", 7);
    report({ sent: true });
  }
  await finalize();
}

void main();
