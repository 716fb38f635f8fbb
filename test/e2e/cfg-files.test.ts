/**
 * The agent reads each rank's CFG table (EBB_CFG_FILE) from a directory the ranks write: a rank
 * that puts a FIFO, a link to /dev/zero or a huge file there gets its table skipped, said once in
 * the agent's log, and the agent goes on serving.
 */
import { afterEach, expect, test } from "bun:test";
import { startCluster, type TestCluster } from "../support/cluster.ts";

let c: TestCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

test("a FIFO, a link to /dev/zero and a 17 MB file as a rank's CFG table are skipped; the agent serves the next step", async () => {
  c = await startCluster({ agents: 1, cpus: 2 });
  const script = `#!/bin/sh
ebb run -n 1 sh -c 'mkfifo "$EBB_CFG_FILE"'; echo "fifo $?" >> results
ebb run -n 1 sh -c 'ln -s /dev/zero "$EBB_CFG_FILE"'; echo "link $?" >> results
ebb run -n 1 sh -c 'head -c 17000000 /dev/zero > "$EBB_CFG_FILE"'; echo "big $?" >> results
ebb run -n 1 echo still-serving > after.out
`;
  const id = await c.submit({ script, nodes: 1, timeLimit: 120 });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 100_000);
  if (done.state !== "COMPLETED") console.log(c.read("results"), c.read(`ebb-${id}.out`), c.daemonLogs().slice(-3000));
  expect({ state: done.state, results: c.read("results"), after: c.read("after.out") }).toEqual({ state: "COMPLETED", results: "fifo 0\nlink 0\nbig 0\n", after: "still-serving\n" });
  const skipped = c.daemonLogs().split("\n").filter((l) => l.includes("skipped") && l.includes("its table"));
  expect(skipped.map((l) => /rank-\d+\.json (is not a regular file|is a symbolic link|is \d+ bytes, over the \d+ the agent reads \(CFG_FILE_MAX_BYTES\))/.exec(l)?.[1])).toEqual([
    "is not a regular file",
    "is a symbolic link",
    "is 17000000 bytes, over the 16777216 the agent reads (CFG_FILE_MAX_BYTES)",
  ]);
}, 120_000);
