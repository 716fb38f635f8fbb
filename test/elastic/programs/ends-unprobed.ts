// An elastic program that never probes: it says it is ready, waits for the file argv[2], and ends.
// A grow asked for meanwhile never gets its window; its joining ranks wait in adaptBegin().
import { existsSync } from "node:fs";
import { adaptBegin, finalizeAdapt, initAdapt } from "../../../src/comm/index.ts";

const { world, status } = await initAdapt();
console.log(`pid=${process.pid} rank=${world.rank} status=${status}`);
if (status === "joining") await adaptBegin();
while (!existsSync(process.argv[2]!)) await Bun.sleep(50);
console.log("done");
await finalizeAdapt();
