// A rank that spawns 2 children through PMI (mcmd=spawn, as MPICH sends it) and reports the answer.
import { PmiClient } from "../../../src/pmi/client.ts";

const [child] = process.argv.slice(2);
const c = await PmiClient.connect();
let result: unknown;
try {
  const codes = await c.spawn({
    commands: [{ execname: process.execPath, args: [child!], maxprocs: 2, info: {} }],
    preput: { PARENT_ROOT_PORT_NAME: "tag#0$port#4711", greeting: "hello-children" },
  });
  result = { rc: 0, codes };
} catch (e) {
  result = { rc: -1, error: (e as Error).message };
}
console.log(`parent ${JSON.stringify({ node: process.env.EBB_NODENAME, ...(result as object) })}`);
await c.finalize();
