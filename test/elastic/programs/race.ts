// Ranks out of step on purpose: each sleeps a random time between probes and never synchronizes
// outside adaptation windows. In each window the ranks compare the probe call they entered it at
// (its iteration): rank 0 prints "window N at=<min>..<max>", which must be one number.
// argv: a file whose appearance ends the run, max sleep ms. Each first rank writes <file>.ready<rank>
// once initAdapt() has returned.
import { existsSync, writeFileSync } from "node:fs";
import { adaptBegin, adaptCommit, finalizeAdapt, initAdapt, probeAdapt } from "../../../src/comm/index.ts";

const stopFile = process.argv[2] ?? "/nonexistent";
const maxSleep = Number(process.argv[3] ?? 3);
let { world, status } = await initAdapt();
// Resizable from here on (its business card is out): say so to the test.
if (status !== "joining") writeFileSync(`${stopFile}.ready${world.rank}`, "");
let i = 0;
let windows = 0;
let seed = (process.pid * 7919) >>> 0;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 1000) / 1000;

async function adapt(): Promise<void> {
  const w = await adaptBegin();
  if (status !== "joining") {
    // Where did every preexisting rank enter? (On the old world, before it goes.)
    const lo = await world.allreduce(i, "min");
    const hi = await world.allreduce(i, "max");
    windows++;
    if (world.rank === 0) console.log(`window ${windows} at=${lo}..${hi} ranks=${w.staying + w.leaving}->${w.staying + w.joining}`);
    if (world.rank === 0) await Promise.all(Array.from({ length: w.joining }, (_, r) => w.intercomm.send(r, [i, windows], 3)));
  } else {
    [i, windows] = (await w.intercomm.recv<[number, number]>(0, 3)).data;
  }
  world = (await adaptCommit()) ?? process.exit(0); // null: this rank left
  status = "new";
  // The window counts as the iteration it was entered at; joining ranks start at the next one.
}

if (status === "joining") await adapt();
while (!existsSync(stopFile)) {
  if ((await probeAdapt()).pending) await adapt();
  i++;
  await Bun.sleep(rand() * maxSleep);
}
// Stop together: nobody may leave while another still expects it in a window.
await world.barrier();
if (world.rank === 0) console.log(`done windows=${windows} size=${world.size}`);
await finalizeAdapt();
