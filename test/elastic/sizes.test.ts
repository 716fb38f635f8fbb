/**
 * Valid sizes live: a Cannon job submitted with `--sizes square` under drms-rs (which grows into
 * every idle node and shrinks by exactly what a waiting job lacks) is only ever resized to
 * squares, and the API, `ebb show` and a manual resize honour its sizes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";

const BUN = process.execPath;
const CANNON = join(ROOT, "examples/epop/cannon.ts");
const SQUARES = [1, 4, 9];

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 5, controllerArgs: ["--policy", "drms-rs", "--ers-interval", "1", "--settle", "0"] });
});
afterAll(async () => {
  await c?.stop();
});

test("submissions: sizes outside the range, no square in it, or not containing the size asked for are refused by field", async () => {
  const base = { argv: ["true"], elastic: true, minNodes: 1, maxNodes: 4 };
  const outside = await c.api("POST", "/v1/jobs", { ...base, sizes: [1, 9] });
  expect(outside.status).toBe(400);
  expect(JSON.stringify(outside.json)).toContain("sizes");
  expect(JSON.stringify(outside.json)).toContain("size 9 is outside the job's range 1-4");
  const none = await c.api("POST", "/v1/jobs", { ...base, minNodes: 2, maxNodes: 3, sizes: "square" });
  expect(none.status).toBe(400);
  expect(JSON.stringify(none.json)).toContain("no square lies in the job's range 2-3");
  const asked = await c.api("POST", "/v1/jobs", { ...base, nodes: 3, sizes: "square" });
  expect(asked.status).toBe(400);
  expect(JSON.stringify(asked.json)).toContain("not one of its sizes (1,4)");
  const bad = await c.api("POST", "/v1/jobs", { ...base, sizes: "squares" });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.json)).toContain("sizes");
  const flag = await c.ebb(["submit", "--sizes", "1,x", "--wrap", "true"]);
  expect(flag.code).not.toBe(0);
  expect(flag.stderr).toContain("--sizes 1,x: expected node counts such as 1,4,9,16, or square");
});

test("a --sizes square Cannon job is only ever resized to squares: 1 -> 4 (not 5), 4 -> 1 (not 3) for a waiting job, back to 4", async () => {
  const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "9", "--sizes", "square", "--", BUN, CANNON, "--n", "36", "--iters", "100000", "--sleep", "50", "--check", "0"], /cannon: started/);
  expect((await c.job(job.id)).sizes).toEqual(SQUARES);
  const show = await c.ebb(["show", String(job.id)]);
  expect(show.stdout).toMatch(/Sizes\s+1,4,9/);
  // 4 nodes idle, nothing waits: drms-rs would grow 1 -> 5; 5 is no square.
  await waitFor("the grow to 4", async () => (await c.job(job.id)).allocation.length === 4 && (await c.job(job.id)).state === "RUNNING", 120_000);
  // A manual resize to a size it did not declare is refused, naming the field.
  const manual = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
  expect(manual.status).toBe(400);
  expect(JSON.stringify(manual.json)).toContain("nodes 3 is not one of job");
  // A rigid 2-node job waits with 1 node idle: drms-rs would shrink 4 -> 3; the square below is 1.
  const rigid = await c.submit({ argv: ["sleep", "600"], nodes: 2 });
  await c.waitJob(rigid, ["RUNNING"], 120_000);
  expect((await c.job(job.id)).allocation.length).toBe(1);
  await c.api("DELETE", `/v1/jobs/${rigid}`);
  await waitFor("the grow back to 4", async () => (await c.job(job.id)).allocation.length === 4 && (await c.job(job.id)).state === "RUNNING", 120_000);
  await c.api("DELETE", `/v1/jobs/${job.id}`);
  await job.finished;
  const adaptations = ((await c.api("GET", `/v1/jobs/${job.id}`)).json.adaptations as { id: number; fromNodes: number; toNodes: number; state: string; reason: string }[]).sort((a, b) => a.id - b.id);
  // (A grow asked for before the ranks reach initAdapt fails and is asked again: not counted.)
  const committed = adaptations.filter((a) => a.state === "COMMITTED");
  const moves = committed.map((a) => `${a.fromNodes}->${a.toNodes}`);
  expect(moves).toEqual(["1->4", "4->1", "1->4"]);
  for (const a of adaptations) expect(SQUARES).toContain(a.toNodes);
  expect(committed[0]!.reason).toContain("5 rounded to 4, a valid size");
  expect(committed[1]!.reason).toContain("3 rounded to 1, a valid size");
}, 400_000);
