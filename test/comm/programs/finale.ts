/**
 * Rank program for clean shutdown: every pair of ranks sends to each other at the same moment (so
 * most pairs end up with two connections, one dialled from each side), then a barrier, then
 * finalize at once. A rank that finishes first must not look gone to one still receiving its last
 * barrier message.
 */
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
const others = Array.from({ length: world.size }, (_, r) => r).filter((r) => r !== world.rank);
await Promise.all([...others.map((r) => world.send(r, world.rank, 7)), ...others.map((r) => world.recv(r, 7))]);
await world.barrier();
await done();
report({ done: true });
