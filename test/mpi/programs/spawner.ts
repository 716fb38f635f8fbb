// A rank that spawns 2 children through PMI (mcmd=spawn, as MPICH sends it) and reports the answer.
// Usage: spawner.ts CHILD [HOLD_FILE [CHILD_ARG...]]: with HOLD_FILE, waits for that file to exist
// before it finalizes; CHILD_ARGs go to the children.
import { existsSync } from "node:fs";
import { PmiClient } from "../../../src/pmi/client.ts";

const [child, hold, ...childArgs] = process.argv.slice(2);
const c = await PmiClient.connect();
let result: unknown;
try {
  const codes = await c.spawn({
    commands: [{ execname: process.execPath, args: [child!, ...childArgs], maxprocs: 2, info: {} }],
    preput: { PARENT_ROOT_PORT_NAME: "tag#0$port#4711", greeting: "hello-children" },
  });
  result = { rc: 0, codes };
} catch (e) {
  result = { rc: -1, error: (e as Error).message };
}
console.log(`parent ${JSON.stringify({ node: process.env.EBB_NODENAME, ...(result as object) })}`);
while (hold && !existsSync(hold)) await Bun.sleep(50);
await c.finalize();
