// Ranks that probe and print every iteration without talking to each other, one of which stops
// probing (a hung computation, as far as ebb can tell) from a given iteration on.
// argv: ms per iteration, the world rank that stalls, the iteration it stalls at. Every rank prints
// "rank=R i=I" each iteration it probes; the stalled one prints "stalled rank=R" once, and runs on
// until it is killed.
import { adaptBegin, adaptCommit, initAdapt, probeAdapt } from "../../../src/comm/index.ts";

const pause = Number(process.argv[2] ?? 20);
const stallRank = Number(process.argv[3] ?? 1);
const stallAt = Number(process.argv[4] ?? 10);
let { world } = await initAdapt();
for (let i = 0; ; i++) {
  if (world.rank === stallRank && i >= stallAt) {
    console.log(`stalled rank=${world.rank}`);
    for (;;) await Bun.sleep(1000);
  }
  if ((await probeAdapt()).pending) {
    await adaptBegin();
    const next = await adaptCommit();
    if (!next) process.exit(0);
    world = next;
  }
  console.log(`rank=${world.rank} i=${i}`);
  await Bun.sleep(pause);
}
