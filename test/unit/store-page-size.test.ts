import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";

const pageSize = (db: { $client: Database }) => (db.$client.query("PRAGMA page_size").get() as { page_size: number }).page_size;

test("a new database has 512-byte pages; one made with 1 KiB or SQLite's 4 KiB keeps them and takes writes", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-page-"));
  try {
    const fresh = openDb(join(dir, "new.db"));
    expect(pageSize(fresh)).toBe(512);
    fresh.$client.close();
    // Reopened, it is the same database.
    const again = openDb(join(dir, "new.db"));
    expect(pageSize(again)).toBe(512);
    again.$client.close();

    for (const size of [1024, 4096]) {
      const oldPath = join(dir, `old-${size}.db`);
      const old = new Database(oldPath, { create: true });
      old.exec(`PRAGMA page_size = ${size}`);
      old.exec("PRAGMA journal_mode = WAL");
      old.exec("CREATE TABLE t (x)");
      old.close();
      const reopened = openDb(oldPath);
      expect(pageSize(reopened)).toBe(size);
      const store = new JobStore(reopened);
      const id = store.tx(() => store.insertJob({ name: "j", kind: "command", argv: ["true"], nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 1 }));
      expect(store.getJob(id)?.name).toBe("j");
      reopened.$client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the WAL's bound is the same 10 MiB whatever the page size", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-page-"));
  try {
    const autocheckpoint = (db: { $client: Database }) => (db.$client.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
    const fresh = openDb(join(dir, "new.db"));
    expect(autocheckpoint(fresh) * pageSize(fresh)).toBe(10 << 20);
    fresh.$client.close();
    const oldPath = join(dir, "old.db");
    const old = new Database(oldPath, { create: true });
    old.exec("PRAGMA page_size = 4096");
    old.exec("PRAGMA journal_mode = WAL");
    old.exec("CREATE TABLE t (x)");
    old.close();
    const reopened = openDb(oldPath);
    expect(autocheckpoint(reopened) * pageSize(reopened)).toBe(10 << 20);
    reopened.$client.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
