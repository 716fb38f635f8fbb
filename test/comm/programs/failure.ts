/**
 * Rank program for peer death. The last rank is the victim: it wires up, reports "ready", then
 * blocks its event loop (reads nothing) until the test SIGKILLs it. The others start operations
 * that depend on it, report "posted", and report how each one ended.
 *
 *   p2p        n=3: rank 0 waits in recv(victim) and recv(ANY_SOURCE); rank 1 has a 4 MiB send to
 *              the victim stuck on backpressure and an allreduce. Afterwards: operations naming the
 *              victim fail at once, collectives fail, 0 <-> 1 still works.
 *   allreduce  n=4: everyone else in an allreduce; rank 0 never talks to the victim directly and
 *              must learn of its death from the others.
 *   exit-clean / exit-crash  n=2, no victim: see below.
 */
import { ANY_SOURCE, type Comm, finalize, initWorld } from "../../../src/comm/index.ts";
import { testBootstrap } from "../../support/comm-kvs.ts";
import { rejection, report } from "../../support/comm-report.ts";

const scenario = process.argv[2];
const boot = await testBootstrap();
const world: Comm = await initWorld(boot);
const r = world.rank;
const victim = world.size - 1;

// exit-clean / exit-crash, n=2: rank 1 ends without finalize (returns, or throws); rank 0 waits
// on it and must be kept alive by its pending receive until that receive fails.
if (scenario === "exit-clean" || scenario === "exit-crash") {
  await world.barrier();
  if (r === 1) {
    boot.kvs.close();
    if (scenario === "exit-crash") throw new Error("rank 1 crashes on purpose");
  } else {
    report({ recv: await rejection(world.recv(1, 3)) });
    boot.kvs.close();
  }
} else if (r === victim) {
  report({ ready: true });
  await boot.kvs.put("victim-blocked", "1");
  // No await after this point: the loop never turns again, so nothing more is read.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

async function victimBlocked(): Promise<void> {
  while ((await boot.kvs.get("victim-blocked")) === undefined) await Bun.sleep(10);
}

if (scenario === "p2p" && r !== victim) {
  await victimBlocked();
  if (r === 0) {
    const a = rejection(world.recv(victim, 5));
    const b = rejection(world.recv(ANY_SOURCE, 6));
    report({ posted: true });
    report({ recvFromVictim: await a, recvAny: await b });
    report({
      sendAfter: await rejection(world.send(victim, "late")),
      recvAfter: await rejection(world.recv(victim)),
      barrierAfter: await rejection(world.barrier()),
    });
    await world.send(1, "still here", 1);
    report({ survivor: (await world.recv(1, 1)).data });
  }
  if (r === 1) {
    const a = rejection(world.send(victim, new Uint8Array(4 * 1024 * 1024)));
    const b = rejection(world.allreduce(1, "sum"));
    report({ posted: true });
    report({ bigSend: await a, allreduce: await b });
    report({ survivor: (await world.recv(0, 1)).data });
    await world.send(0, "me too", 1);
  }
}

if (scenario === "allreduce" && r !== victim) {
  const a = rejection(world.allreduce(new Float64Array([r]), "sum"));
  report({ posted: true });
  report({ allreduce: await a });
}

if (scenario === "p2p" || scenario === "allreduce") {
  // Survivors leave together: one that finalizes early would look like a second lost peer to the
  // others (an honest error, but not the one under test).
  await boot.kvs.fence("survivors", world.size - 1);
  await finalize();
  boot.kvs.close();
}
