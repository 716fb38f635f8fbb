// The PMI name service: `publish NAME PORT`, `lookup NAME`, `unpublish NAME` (rank 0 acts).
import { PmiClient } from "../../../src/pmi/client.ts";

const [op, service, port] = process.argv.slice(2);
const c = await PmiClient.connect();
if (c.rank === 0) {
  const out = op === "publish" ? await c.publish(service!, port!) : op === "lookup" ? await c.lookup(service!) : await c.unpublish(service!);
  console.log(`${op} ${service} -> ${JSON.stringify(out ?? null)}`);
}
await c.fence();
await c.finalize();
