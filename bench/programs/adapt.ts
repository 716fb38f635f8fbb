// An elastic loop (allreduce each iteration) that reports, for each adaptation, how long rank 0 of
// the old world was blocked: from the probe call that said pending through adaptBegin and adaptCommit.
// It runs until the file named in argv[2] appears (as rank 0 sees it).
import { adaptBegin, adaptCommit, finalizeAdapt, initAdapt, probeAdapt } from "../../src/comm/index.ts";
import { mark } from "../../src/util/trace.ts";

mark("p.loaded");

const stop = process.argv[2] ?? "/nonexistent";
let { world, status } = await initAdapt();
console.log(`ready rank=${world.rank}`);

async function adapt(t0: number): Promise<void> {
  const w = await adaptBegin();
  const next = await adaptCommit();
  const blocked = (Bun.nanoseconds() - t0) / 1e6;
  if (status !== "joining" && world.rank === 0) console.log(`blocked_ms=${blocked.toFixed(3)} from=${w.staying + w.leaving} to=${w.staying + w.joining}`);
  world = next ?? process.exit(0);
  status = "new";
}

if (status === "joining") await adapt(Bun.nanoseconds());
// Rank 0 alone looks for the stop file and the allreduce carries its answer: were every rank to
// look, one could leave the loop an iteration before another and the two collectives would not match.
for (;;) {
  const t0 = Bun.nanoseconds();
  if ((await probeAdapt()).pending) await adapt(t0);
  if ((await world.allreduce(world.rank === 0 && (await Bun.file(stop).exists()) ? 1 : 0, "max")) === 1) break;
  await Bun.sleep(1);
}
await finalizeAdapt();
