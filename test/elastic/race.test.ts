/**
 * The probe race (dissertation §6.2.2, §9.3): ranks that never synchronize between probes, each
 * sleeping a random time, must still all enter every adaptation window at the same probe call,
 * whatever the drift, through 50 resizes in a row, without a deadlock.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { outputOf, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4 });
});
afterAll(async () => {
  await c?.stop();
});

test("50 resizes of ranks out of step: every window is entered at one probe call by all", async () => {
  const stop = join(c.dir, "stop-race");
  const run = c.ebbSpawn(["run", "-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", process.execPath, join(import.meta.dir, "programs/race.ts"), stop, "3"]);
  const id = await waitFor("the job to run", async () => {
    const jobs = (await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs;
    const job = jobs.length > 0 ? await c.job(jobs[0].id) : undefined;
    // Resizes need the ranks' business cards: wait until both ranks are past initAdapt().
    return job && job.steps.length === 1 && existsSync(`${stop}.ready0`) && existsSync(`${stop}.ready1`) ? job.id : undefined;
  });
  const sizes = [3, 4, 2, 1, 4, 3, 1, 2];
  for (let k = 0; k < 50; k++) {
    const nodes = sizes[k % sizes.length]!;
    const a = await c.resize(id, nodes);
    expect([k, a.state]).toEqual([k, "COMMITTED"]);
  }
  writeFileSync(stop, "");
  const { stdout: out, stderr: err, code } = await outputOf(run);
  expect(err).toBe("");
  expect(code).toBe(0);
  const windows = [...out.matchAll(/window (\d+) at=(\d+)\.\.(\d+) ranks=(\d+)->(\d+)/g)];
  expect(windows).toHaveLength(50);
  for (const [, n, lo, hi, from, to] of windows) {
    expect({ window: Number(n), lo: Number(lo) }).toEqual({ window: Number(n), lo: Number(hi) });
    expect(Number(to)).toBe(sizes[(Number(n) - 1) % sizes.length]!);
    expect(Number(from)).toBe(Number(n) === 1 ? 2 : sizes[(Number(n) - 2) % sizes.length]!);
  }
  expect(out).toContain(`done windows=50 size=${sizes[49 % sizes.length]}`);
});
