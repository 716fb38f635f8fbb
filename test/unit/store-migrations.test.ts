import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import journal from "../../migrations/meta/_journal.json" with { type: "json" };
import { MIGRATION_SQL, loadMigrations } from "../../src/store/migrations.ts";
import { openDb } from "../../src/store/db.ts";

test("every migration file and journal entry is built into the program", () => {
  const files = readdirSync(new URL("../../migrations/", import.meta.url)).filter((f) => f.endsWith(".sql")).map((f) => f.replace(/\.sql$/, ""));
  expect(Object.keys(MIGRATION_SQL).sort()).toEqual(files.sort());
  expect(journal.entries.map((e) => e.tag).sort()).toEqual(files.sort());
  expect(loadMigrations()).toHaveLength(files.length);
});

test("migrations apply to an empty database, and again without effect", () => {
  const db = openDb(":memory:");
  const tables = db.$client.query("select name from sqlite_master where type='table' order by name").all() as { name: string }[];
  expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["jobs", "nodes", "job_nodes", "job_events", "steps"]));
  const applied = db.$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number };
  expect(applied.n).toBe(journal.entries.length);
});
