/**
 * Rank program: rank 1 sends its last message to rank 0 and exits at once, while rank 0's event
 * loop is busy, so rank 0 learns of the message only after rank 1 is gone. What rank 1 wrote must
 * still arrive, over a socket or a shared-memory ring alike. Rank 0 posts its receive before it
 * gets busy, so the connection it makes to watch rank 1 finds nobody listening (the socket file
 * gone on one node, a closed port across nodes) before it has read rank 1's connection.
 */
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
// No traffic before this message: it is rank 1's first to rank 0, so it makes the ring.
if (world.rank === 1) {
  await world.send(0, new Float64Array(1000).fill(7), 3);
  await done();
  report({ sent: true });
} else {
  const last = world.recv<Float64Array>(1, 3);
  Bun.sleepSync(1500); // no event loop turn: the SHM frame (if any) waits in the socket
  const m = await last;
  report({ got: m.data.length, sum: m.data.reduce((a, b) => a + b, 0) });
  await done();
}
