/**
 * A job's script and environment are written once, in job_texts, out of its `jobs` row (which
 * every start, end and usage report rewrites whole); every read that shows them reads them back.
 * A database from before the table migrates with its jobs, which keep their own copies. Texts
 * that deflate by a page or more are stored deflated (`packed`), others as they are.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import journal from "../../migrations/meta/_journal.json" with { type: "json" };
import { openDb } from "../../src/store/db.ts";
import { loadMigrations } from "../../src/store/migrations.ts";
import { JobStore, packTexts } from "../../src/store/jobs.ts";
import { shellLikeEnv } from "../support/shell-env.ts";

/** A database migrated as the last ebb before migration `tag` left it (the migrations after it come later, in order). */
function migratedUpTo(path: string, tag: string) {
  const db = drizzle({ client: new Database(path) });
  const upTo = journal.entries.findIndex((e) => e.tag === tag);
  const internals = db as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => void }; session: unknown };
  internals.dialect.migrate(loadMigrations().slice(0, upTo), internals.session, { migrationsFolder: "migrations" });
  return db;
}

const values = {
  name: "big",
  kind: "batch" as const,
  argv: null,
  script: "#!/bin/sh\necho hello\n",
  nodes: 1,
  minNodes: 1,
  maxNodes: 1,
  timeLimit: 60,
  env: { BIG: "x".repeat(20_000), HOME: "/home/alice" },
  cwd: "/tmp",
  submitTime: 1000,
};

const textBytes = (store: JobStore, table: string) =>
  (store.db.$client.query(`select sum(length(coalesce(script,'')) + length(env)${table === "job_texts" ? " + coalesce(length(packed), 0)" : ""}) as n from ${table}`).get() as { n: number }).n;

test("a job's script and environment are kept out of its row, and read back with it", () => {
  const store = new JobStore(openDb(":memory:"));
  const id = store.tx(() => store.insertJob(values));
  const bare = store.tx(() => store.insertJob({ ...values, kind: "command", argv: ["true"], script: null, env: {} }));
  expect(textBytes(store, "jobs")).toBeLessThan(10);
  expect(textBytes(store, "job_texts")).toBeGreaterThan(0);
  // A job with neither has no row there.
  expect((store.db.$client.query("select count(*) as n from job_texts").get() as { n: number }).n).toBe(1);
  store.markRunning(id, 2000, 1, 1, "out", null);
  store.markEnded(id, "COMPLETED", 3000, 0, null);
  store.setUsage(id, { cpuSec: 1, peakMemMiB: 2 });
  expect(store.getJob(id)).toMatchObject({ state: "COMPLETED", script: values.script, env: values.env, usage: { cpuSec: 1, peakMemMiB: 2 } });
  expect(store.getJob(bare)).toMatchObject({ script: null, env: {}, argv: ["true"] });
  expect(store.activeJobs(["PENDING"]).map((r) => [r.id, r.env])).toEqual([[bare, {}]]);
  store.setState(id, "PENDING");
  expect(store.activeJobs(["PENDING"]).map((r) => [r.id, r.script, r.env.HOME])).toEqual([
    [id, values.script, "/home/alice"],
    [bare, null, undefined],
  ]);
  expect(store.listJobs({ limit: 10 }).map((r) => ["script" in r, "env" in r])).toEqual([
    [false, false],
    [false, false],
  ]);
});

test("a purged job's texts go with it", () => {
  const store = new JobStore(openDb(":memory:"));
  const id = store.tx(() => store.insertJob(values));
  store.markEnded(id, "COMPLETED", 2000, 0, null);
  expect(store.purgeEnded(10_000)).toBe(1);
  expect((store.db.$client.query("select count(*) as n from job_texts").get() as { n: number }).n).toBe(0);
});

test("a database from before job_texts migrates, and its jobs keep their script and environment", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-texts-"));
  try {
    const path = join(dir, "ebb.db");
    // A database as the last ebb before job_texts left it: no such table, its jobs' texts in their rows.
    const before = migratedUpTo(path, "0016_job_texts");
    before.$client.run(
      "insert into jobs (name, kind, state, script, nodes, min_nodes, max_nodes, time_limit, env, cwd, submit_time) values ('old', 'batch', 'PENDING', ?, 1, 1, 1, 60, ?, '/tmp', 1000)",
      [values.script, JSON.stringify(values.env)],
    );
    before.$client.close();
    const store = new JobStore(openDb(path));
    expect(store.getJob(1)).toMatchObject({ name: "old", script: values.script, env: values.env });
    expect(store.activeJobs(["PENDING"]).map((r) => r.env.HOME)).toEqual(["/home/alice"]);
    const id = store.tx(() => store.insertJob(values));
    expect(store.getJob(id)).toMatchObject({ script: values.script, env: values.env });
    store.db.$client.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const packedCount = (store: JobStore) => (store.db.$client.query("select count(*) as n from job_texts where packed is not null").get() as { n: number }).n;

test("texts that deflate by a page or more are stored deflated and read back the same; small or incompressible ones as they are", () => {
  const store = new JobStore(openDb(":memory:"));
  const env = shellLikeEnv();
  const big = store.tx(() => store.insertJob({ ...values, env }));
  expect(packedCount(store)).toBe(1);
  expect(textBytes(store, "job_texts")).toBeLessThan(JSON.stringify(env).length - 512);
  const small = store.tx(() => store.insertJob({ ...values, env: { HOME: "/home/alice" } }));
  const random = { KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(1200))).toString("base64") };
  const noise = store.tx(() => store.insertJob({ ...values, script: null, env: random }));
  expect(packedCount(store)).toBe(1);
  expect(packTexts(null, random).packed).toBeNull();
  expect([big, small, noise].map((id) => store.getJob(id)).map((r) => [r?.script, r?.env])).toEqual([
    [values.script, env],
    [values.script, { HOME: "/home/alice" }],
    [null, random],
  ]);
  expect(store.activeJobs(["PENDING"]).find((r) => r.id === big)?.env).toEqual(env);
});

test("a database from before packed texts migrates: its rows read as they were, new ones are packed", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-texts-"));
  try {
    const path = join(dir, "ebb.db");
    const env = shellLikeEnv();
    const before = migratedUpTo(path, "0022_job_texts_packed");
    before.$client.run("insert into jobs (name, kind, state, nodes, min_nodes, max_nodes, time_limit, env, cwd, submit_time) values ('old', 'batch', 'PENDING', 1, 1, 1, 60, '{}', '/tmp', 1000)");
    before.$client.run("insert into job_texts (job_id, script, env) values (1, ?, ?)", [values.script, JSON.stringify(env)]);
    before.$client.close();
    const store = new JobStore(openDb(path));
    expect(store.getJob(1)).toMatchObject({ name: "old", script: values.script, env });
    const id = store.tx(() => store.insertJob({ ...values, env }));
    expect(packedCount(store)).toBe(1);
    expect(store.getJob(id)).toMatchObject({ script: values.script, env });
    store.db.$client.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
