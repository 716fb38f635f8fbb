/**
 * The controller's StoreHealth over a real SQLite file that stops taking writes (PRAGMA
 * query_only: every write fails with SQLITE_READONLY, as on a read-only database): writes are
 * refused with the reason from the first failure on, reads go on, reports wait in order by key,
 * the controller's own decisions are skipped, and the probe writes what waited once the
 * database takes writes again. The full disk, with real processes: test/e2e/disk-full.test.ts.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guardWrites, openDb, StoreUnavailable, storageFailure } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { StoreHealth } from "../../src/roles/controller/storage.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-store-health-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a database that stops taking writes: refused with the reason, reads go on, what waits is written in order when it takes writes again", () => {
  const path = join(dir, "ebb.db");
  const db = openDb(path);
  const store = new JobStore(db);
  // The test probes by hand.
  const health = new StoreHealth(db, path, 3_600_000);
  guardWrites(db, health);
  health.check();
  expect(health.writable).toBe(true);
  const id = store.insertJob({ name: "t", kind: "command", nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 1, argv: ["true"] });

  // A failure that is not the storage's leaves it writable.
  expect(() =>
    store.tx(() => {
      store.addEvent(id, 1, "x", "");
      throw new Error("refused by its caller");
    }),
  ).toThrow("refused by its caller");
  expect(health.writable).toBe(true);

  db.$client.exec("PRAGMA query_only = 1");
  const first = (() => {
    try {
      store.addEvent(id, 1, "lost", "");
    } catch (e) {
      return e;
    }
  })();
  expect(first).toBeInstanceOf(StoreUnavailable);
  expect((first as StoreUnavailable).sqliteCode).toStartWith("SQLITE_READONLY");
  expect(health.writable).toBe(false);
  expect(health.degraded!.reason).toContain(`the database ${path} cannot be written (SQLITE_READONLY`);
  expect(health.degraded!.reason).toContain("it resumes by itself");

  // From now on every write is refused before it is tried, a transaction too; reads work.
  db.$client.exec("PRAGMA query_only = 0");
  expect(() => store.tx(() => store.setHeld([id], true))).toThrow(StoreUnavailable);
  expect(() => store.setHeld([id], true)).toThrow(StoreUnavailable);
  expect(store.getJob(id)!.held).toBe(false);
  db.$client.exec("PRAGMA query_only = 1");

  // Reports wait by key, in the order they came; a key's newest replaces the one waiting.
  health.orLater("a", () => store.addEvent(id, 2, "first", ""));
  health.orLater("b", () => store.addEvent(id, 3, "second", ""));
  health.orLater("a", () => store.addEvent(id, 4, "third", ""));
  expect(health.deferred).toBe(2);
  // The controller's own decisions are not taken.
  let decided = false;
  health.quietly(() => (decided = true));
  expect(decided).toBe(false);

  // Still read-only: the probe's write fails, nothing is written.
  expect(health.probe()).toBe(false);
  expect(health.deferred).toBe(2);

  db.$client.exec("PRAGMA query_only = 0");
  expect(health.probe()).toBe(true);
  expect(health.writable).toBe(true);
  expect(health.deferred).toBe(0);
  expect(store.eventsOf(id).map((e) => e.kind)).toEqual(["second", "third"]);
  store.setHeld([id], true);
  expect(store.getJob(id)!.held).toBe(true);
  health.quietly(() => (decided = true));
  expect(decided).toBe(true);
  health.stop();
  db.$client.close();
});

test("the storage failures are SQLite's full, read-only, I/O and cannot-open codes, and nothing else", () => {
  for (const code of ["SQLITE_FULL", "SQLITE_READONLY", "SQLITE_READONLY_DBMOVED", "SQLITE_IOERR", "SQLITE_IOERR_SHMSIZE", "SQLITE_CANTOPEN"]) expect(storageFailure({ code })).toBe(code);
  for (const code of ["SQLITE_CONSTRAINT_FOREIGNKEY", "SQLITE_BUSY", "SQLITE_ERROR", "ENOSPC", 13]) expect(storageFailure({ code })).toBeUndefined();
  expect(storageFailure(new Error("x"))).toBeUndefined();
  expect(storageFailure(null)).toBeUndefined();
});
