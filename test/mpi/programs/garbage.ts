// Rank 1 writes what is not PMI on its PMI fd; the others wait in a fence that never completes.
import { PmiClient } from "../../../src/pmi/client.ts";
import { writeSync } from "node:fs";

if (process.env.PMI_RANK === "1") {
  writeSync(3, "this is not PMI at all\n");
  await Bun.sleep(60_000);
} else {
  const c = await PmiClient.connect();
  await c.fence();
}
