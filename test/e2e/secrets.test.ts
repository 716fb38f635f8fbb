/** Secrets: a job's token never sees the submitter's environment; the store and controller.url are owner-only. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { startCluster, type TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 1 });
});
afterAll(async () => {
  await c?.stop();
});

test("the submitter's environment: not stored with EBB_TOKEN, never served to a job's token, secret-looking values masked for the cluster token", async () => {
  const env = { EBB_TOKEN: c.token, API_KEY: "k-123", DB_PASSWORD: "hunter2", MY_SECRET_THING: "s", PLAIN: "visible" };
  const id = await c.submit({ argv: ["sh", "-c", 'printf %s "$EBB_TOKEN" > job-token; printf %s "$PLAIN" > plain'], env });
  expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
  const jobToken = c.read("job-token");
  // The job runs with its own token (and the rest of its environment), not the submitter's.
  expect(jobToken).toStartWith(`job.${id}.`);
  expect(c.read("plain")).toBe("visible");
  const asJob = await c.api("GET", `/v1/jobs/${id}`, undefined, jobToken);
  expect(asJob.status).toBe(200);
  expect(asJob.json.env).toEqual({});
  const asAdmin = await c.api("GET", `/v1/jobs/${id}`);
  expect(asAdmin.json.env).toEqual({ API_KEY: "********", DB_PASSWORD: "********", MY_SECRET_THING: "********", PLAIN: "visible" });
  expect(JSON.stringify(asAdmin.json)).not.toContain(c.token);
});

test("the database, its WAL and controller.url are 0600 whatever the directory's mode", async () => {
  chmodSync(c.stateDir, 0o755);
  await waitFor("the WAL file", () => existsSync(join(c.stateDir, "ebb.db-wal")));
  for (const f of ["ebb.db", "ebb.db-wal", "ebb.db-shm", "controller.url", "token"]) {
    const p = join(c.stateDir, f);
    if (!existsSync(p)) continue;
    expect({ f, mode: (statSync(p).mode & 0o777).toString(8) }).toEqual({ f, mode: "600" });
  }
});
