/**
 * Rank program: a change of membership by hand, the way the adaptation window will do it.
 * Four initial ranks; 0 and 1 stay, 2 and 3 leave; one joining process (EBB_TEST_ROLE=join)
 * becomes rank 2 of the generation-1 world. Old ranks send their data to the joiner over an
 * intercommunicator first; at "commit" the staying ranks invalidate the old world.
 */
import {
  ANY_SOURCE,
  type Card,
  type Comm,
  Intercomm,
  cardKey,
  contextOf,
  createWorld,
  finalize,
  initWorld,
  openTransport,
  parseCard,
} from "../../../src/comm/index.ts";
import { testBootstrap } from "../../support/comm-kvs.ts";
import { rejection, report } from "../../support/comm-report.ts";

const OLD = 4;
const STAYING = 2;
/** Each old rank's block for the joiner: 3.2 MB, more than a shared-memory ring holds (2 MiB). */
const BLOCK = 400_000;
const block = (r: number) => new Float64Array(BLOCK).fill(r).fill(r * 10, 1, 2);
const intact = (r: number, b: Float64Array) => b.length === BLOCK && b[1] === r * 10 && b.every((x, i) => i === 1 || x === r);
const boot = await testBootstrap();
const kvs = boot.kvs;
const card = async (key: string) => parseCard((await kvs.get(key))!);
const oldCards = async () => Promise.all(Array.from({ length: OLD }, (_, r) => card(cardKey(r, 0))));

if (process.env.EBB_TEST_ROLE === "join") {
  const t = openTransport({ node: boot.node });
  await kvs.put(cardKey(STAYING, 1), t.cardText);
  await kvs.fence("adapt", OLD + 1);
  const old = await oldCards();
  const inter = new Intercomm(t, { ctx: contextOf(1, 1), rank: 0, local: [t.card], remote: old, name: "adapt-inter" });
  const got: [number, number[]][] = [];
  let whole = true;
  for (let i = 0; i < OLD; i++) {
    const m = await inter.recv<Float64Array>(ANY_SOURCE, 0);
    got.push([m.source, Array.from(m.data.subarray(0, 2))]);
    whole &&= intact(m.source, m.data);
  }
  const world = createWorld(t, [...old.slice(0, STAYING), t.card], { generation: 1 });
  inter.free();
  await kvs.fence("left", OLD + 1);
  report({
    role: "join",
    redistributed: got.sort((a, b) => a[0] - b[0]),
    whole,
    rank: world.rank,
    size: world.size,
    sum: await world.allreduce(world.rank + 1, "sum"),
    ranksSeen: await world.allgather(world.rank),
  });
  await finalize();
} else {
  const world: Comm = await initWorld(boot);
  const r = world.rank;
  // Some history on the old world: derived communicators and connections between all ranks.
  const sub = (await world.split(r % 2))!;
  const dup = await world.dup();
  await world.allreduce(r, "sum");
  await sub.barrier();
  if (r < STAYING) {
    await world.send(1 - r, "hi", 1);
    await world.recv(1 - r, 1);
  }
  const pending = rejection(world.recv(ANY_SOURCE, 99));

  await kvs.fence("adapt", OLD + 1);
  const joiner = await card(cardKey(STAYING, 1));
  const old = world.members as Card[];
  const inter = new Intercomm(world.transport, { ctx: contextOf(1, 1), rank: r, local: old, remote: [joiner], name: "adapt-inter", parent: world });
  await inter.send(0, block(r), 0);

  if (r >= STAYING) {
    report({ role: "leave", rank: r });
    await finalize();
    await kvs.fence("left", OLD + 1);
  } else {
    const mate = old[1 - r]!.id;
    const opened = () => world.transport.peerStates().find((p) => p.id === mate)!.opened;
    const before = opened();
    const next = createWorld(world.transport, [...old.slice(0, STAYING), joiner], { generation: 1 });
    // The staying ranks talk over the new world: it must be on the connection they already had.
    await next.send(1 - r, `again from ${r}`, 2);
    const again = (await next.recv(1 - r, 2)).data;
    const newConnections = opened() - before;

    world.invalidate("replaced by world generation 1");
    const invalid = {
      pending: await pending,
      barrier: await rejection(world.barrier()),
      send: await rejection(world.send(1 - r, "x")),
      sub: await rejection(sub.allreduce(1, "sum")),
      dup: await rejection(dup.recv()),
      inter: await rejection(inter.send(0, "late")),
      valid: [world.valid, sub.valid, dup.valid, inter.valid, next.valid],
    };

    await kvs.fence("left", OLD + 1);
    report({
      role: "stay",
      oldRank: r,
      rank: next.rank,
      size: next.size,
      again,
      connectionsToMate: before,
      newConnections,
      invalid,
      sum: await next.allreduce(next.rank + 1, "sum"),
      ranksSeen: await next.allgather(next.rank),
    });
    await finalize();
  }
}
kvs.close();
