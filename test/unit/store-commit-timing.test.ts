/**
 * ebb_sqlite_commit_duration_seconds sees every commit: JobStore.onCommit each transaction, and
 * onAutocommit each write statement run outside one (SQLite commits it alone) — not the writes
 * inside a transaction (its commit is timed once), not reads. On a real in-memory SQLite.
 */
import { expect, test } from "bun:test";
import { onAutocommit, openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";

test("single writes outside a transaction are timed one by one; a transaction once; reads not at all", () => {
  const db = openDb(":memory:");
  const store = new JobStore(db);
  const autocommits: number[] = [];
  const transactions: number[] = [];
  onAutocommit(db, (ms) => autocommits.push(ms));
  store.onCommit = (ms) => transactions.push(ms);

  // A prepared insert (made when the store was) and a prepared update, each alone.
  const id = store.insertJob({ name: "t", kind: "command", nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: Date.now(), argv: ["true"] });
  store.addEvent(id, Date.now(), "submitted", "by the test");
  expect(autocommits).toHaveLength(2);
  // A statement built on the spot (not prepared beforehand).
  store.setHeld([id], true);
  expect(autocommits).toHaveLength(3);
  expect(autocommits.every((ms) => ms >= 0)).toBe(true);

  // Three writes in one transaction: one commit, timed by onCommit, none as autocommits.
  store.tx(() => {
    store.addEvent(id, Date.now(), "a", "");
    store.addEvent(id, Date.now(), "b", "");
    store.setHeld([id], false);
  });
  expect(transactions).toHaveLength(1);
  expect(autocommits).toHaveLength(3);

  // Reads are not commits.
  store.allocationsOf([id]);
  store.getJob(id);
  expect(autocommits).toHaveLength(3);
  expect(transactions).toHaveLength(1);
});
