// An elastic loop: every iteration probes, then allreduces. Prints each world it joins and ends in.
// argv: iterations, sleep ms per iteration, and "fail-joining" to have ranks a grow starts exit 3
// at once (a joining step that fails); "--end FILE": the ranks end together, before the
// iterations are done, once FILE exists (a test done with the run ends it rather than wait for it).
// A member's failure: the fault window, then on with the survivors.
import { existsSync } from "node:fs";
import { adaptBegin, adaptCommit, CommError, finalizeAdapt, initAdapt, probeAdapt } from "../../../src/comm/index.ts";

const iterations = Number(process.argv[2] ?? 100);
const pause = Number(process.argv[3] ?? 5);
const endFile = process.argv.includes("--end") ? process.argv[process.argv.indexOf("--end") + 1] : undefined;
let { world, status } = await initAdapt();
let i = 0;
console.log(`pid=${process.pid} rank=${world.rank} status=${status}`);

/** The window: the old rank 0 tells joining ranks the iteration; leaving ranks exit after commit. */
async function adapt(): Promise<void> {
  const w = await adaptBegin();
  if (status === "joining") i = (await w.intercomm.recv<number>(0, 1)).data;
  else if (world.rank === 0) await Promise.all(Array.from({ length: w.joining }, (_, r) => w.intercomm.send(r, i, 1)));
  const next = await adaptCommit();
  if (!next) {
    console.log(`left rank=${world.rank} at=${i}`);
    process.exit(0);
  }
  world = next;
  status = "new";
  if (world.rank === 0) console.log(`world size=${world.size} at=${i} staying=${w.staying} leaving=${w.leaving} joining=${w.joining}`);
}

if (status === "joining" && process.argv[4] === "fail-joining") process.exit(3);
if (status === "joining") await adapt();
const isFault = (e: unknown) => e instanceof CommError && (e.code === "PEER_FAILED" || e.code === "COMM_INVALID");
while (i < iterations) {
  try {
    if ((await probeAdapt()).pending) await adapt();
    const sum = await world.allreduce(1, "sum");
    if (sum !== world.size) throw new Error(`allreduce gave ${sum} on a world of ${world.size}`);
    if (endFile !== undefined && (await world.allreduce(existsSync(endFile) ? 1 : 0, "max")) === 1) break;
  } catch (e) {
    if (!isFault(e) || !(await probeAdapt()).fault) throw e;
    // The fault window; one that a further failure supersedes is followed by another.
    for (;;) {
      try {
        await adapt();
        break;
      } catch (e2) {
        if (!isFault(e2) || !(await probeAdapt()).fault) throw e2;
      }
    }
    continue;
  }
  i++;
  await Bun.sleep(pause);
}
if (world.rank === 0) console.log(`done size=${world.size} at=${i}`);
await finalizeAdapt();
