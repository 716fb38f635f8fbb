// A spawned child: reports its PMI view, the pre-put keys, and where it runs. Usage: spawned.ts
// [HOLD_FILE]: with HOLD_FILE, waits for that file to exist before it finalizes.
import { existsSync } from "node:fs";
import { PmiClient } from "../../../src/pmi/client.ts";

const [hold] = process.argv.slice(2);
const c = await PmiClient.connect();
const info = {
  rank: c.rank,
  size: c.size,
  spawned: c.spawned,
  env: process.env.PMI_SPAWNED,
  node: process.env.EBB_NODENAME,
  greeting: await c.get("greeting"),
  port: await c.get("PARENT_ROOT_PORT_NAME"),
};
await c.fence();
console.log(`child ${JSON.stringify(info)}`);
while (hold && !existsSync(hold)) await Bun.sleep(50);
await c.finalize();
