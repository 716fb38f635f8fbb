/**
 * Rank program: rank 1 gives its part of a gather and a reduce to root 0 and exits cleanly;
 * root 0 calls the collectives only once it has seen that exit. The parts are already queued
 * there: a member that exited after giving what the collective needs from it must not fail it.
 * (Jacobi after a fault adaptation: a survivor finished first and its peer failed its final gather
 * with "rank 1 of world(g1) has exited".)
 */
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
if (world.rank === 1) {
  await world.gather("from 1", 0);
  await world.reduce(5, "sum", 0);
  await done();
  report({ gave: true });
} else {
  const peer = world.members[1]!.id;
  while (!world.transport.down(peer)) await Bun.sleep(5);
  const seen = world.transport.down(peer)!.exited;
  const parts = await world.gather("from 0", 0);
  const sum = await world.reduce(2, "sum", 0);
  // An operation that needs it after its exit still fails, naming the exit.
  const later = await world.recv(1, 9).then(
    () => "received",
    (e: Error & { code?: string }) => e.code,
  );
  report({ seen, parts, sum, later });
  await done();
}
