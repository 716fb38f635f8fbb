/**
 * A synthetic elastic application whose communication-to-computation ratio (MTCT) is a parameter
 * that changes by phase: for testing and demonstrating the elastic scheduler.
 *
 * Every iteration computes for work/size ms (strong scaling: the total work is fixed, so more
 * ranks compute less each), then communicates for ratio times that long (allreduces until the
 * budget is spent). An adaptation only moves the iteration counter.
 *
 *   ebb run -N 4 --elastic --min-nodes 1 --max-nodes 8 --sample-interval 5 \
 *     bun examples/synthetic.ts --work 800 --phases 0.005:200,0.3:200
 *
 * Flags: --work MS (compute per iteration summed over ranks, default 400), --phases R:N,... (MTCT
 * ratio and iterations of each phase, default 0.05:1000), --busy (spin instead of sleeping while
 * computing, to load the CPUs).
 */
import { adaptBegin, adaptCommit, finalizeAdapt, initAdapt, probeAdapt } from "ebb/comm";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

const work = Number(arg("work") ?? 400);
const busy = process.argv.includes("--busy");
const phases = (arg("phases") ?? "0.05:1000").split(",").map((p) => {
  const [ratio, iterations] = p.split(":").map(Number);
  if (!(ratio! >= 0) || !(iterations! > 0)) {
    console.error(`synthetic: bad phase "${p}": expected RATIO:ITERATIONS, e.g. 0.3:200`);
    process.exit(2);
  }
  return { ratio: ratio!, iterations: iterations! };
});
if (!(work > 0)) {
  console.error("synthetic: --work needs a positive number of milliseconds");
  process.exit(2);
}
const total = phases.reduce((a, p) => a + p.iterations, 0);

let { world, status } = await initAdapt();
let iteration = 0;

function phaseAt(i: number): { ratio: number; index: number } {
  let end = 0;
  for (const [index, p] of phases.entries()) {
    end += p.iterations;
    if (i < end) return { ratio: p.ratio, index };
  }
  return { ratio: phases[phases.length - 1]!.ratio, index: phases.length - 1 };
}

async function compute(ms: number): Promise<void> {
  if (!busy) return Bun.sleep(ms);
  const end = performance.now() + ms;
  while (performance.now() < end) {}
}

/** Allreduce until every rank has spent its communication budget (they stop together). */
async function communicate(ms: number): Promise<void> {
  const end = performance.now() + ms;
  do {
    /* keep going while any rank wants more */
  } while ((await world.allreduce(performance.now() < end ? 1 : 0, "max")) === 1);
}

async function adapt(): Promise<void> {
  const w = await adaptBegin();
  if (status === "joining") iteration = (await w.intercomm.recv<number>(0, 1)).data;
  else if (world.rank === 0) await Promise.all(Array.from({ length: w.joining }, (_, r) => w.intercomm.send(r, iteration, 1)));
  world = (await adaptCommit()) ?? process.exit(0); // null: this rank left
  status = "new";
  if (world.rank === 0) console.log(`synthetic: iteration ${iteration}: ${w.staying + w.leaving} -> ${world.size} ranks`);
}

if (status === "joining") await adapt();
let lastPhase = -1;
while (iteration < total) {
  if ((await probeAdapt()).pending) await adapt();
  const { ratio, index } = phaseAt(iteration);
  if (index !== lastPhase && world.rank === 0) console.log(`synthetic: phase ${index + 1} (MTCT ${ratio}) from iteration ${iteration} on ${world.size} ranks`);
  lastPhase = index;
  const mine = work / world.size;
  await compute(mine);
  await communicate(ratio * mine);
  iteration++;
}
if (world.rank === 0) console.log(`synthetic: done after ${iteration} iterations on ${world.size} ranks`);
await finalizeAdapt();
