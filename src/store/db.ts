/** Opens the SQLite job store (WAL) and applies pending migrations. */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import * as schema from "./schema.ts";
import { loadMigrations } from "./migrations.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** The database was migrated by a newer ebb than this one: its schema is unknown here. */
export class DatabaseTooNew extends Error {}

/** Who is told the duration (ms) of each write statement run outside a transaction (SQLite commits it alone). */
const autocommitObservers = new WeakMap<Database, (ms: number) => void>();

/** Tells `fn` how long each autocommitted write took, commit included (transactions: JobStore.onCommit). */
export function onAutocommit(db: Db, fn: (ms: number) => void): void {
  autocommitObservers.set(db.$client, fn);
}

/**
 * Times the write statements SQLite runs outside a transaction: each is its own transaction and
 * commit. Every statement drizzle makes goes through Database.prepare (prepared ones included,
 * made once), so its write statements get their run/get/all/values timed when no transaction is open.
 */
function timeAutocommits(sqlite: Database): void {
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((query: string, ...rest: unknown[]) => {
    const st = (prepare as (q: string, ...r: unknown[]) => ReturnType<Database["prepare"]>)(query, ...rest);
    if (!/^\s*(insert|update|delete|replace)\b/i.test(query)) return st;
    for (const m of ["run", "get", "all", "values"] as const) {
      const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        const fn = autocommitObservers.get(sqlite);
        if (!fn || sqlite.inTransaction) return call(...args);
        const t0 = performance.now();
        try {
          return call(...args);
        } finally {
          fn(performance.now() - t0);
        }
      };
    }
    return st;
  }) as Database["prepare"];
}

export function openDb(path: string): Db {
  const file = path !== ":memory:" && !path.startsWith("file:");
  if (file) {
    mkdirSync(dirname(path), { recursive: true });
    // Every job's environment and script are in here: owner only, whatever the directory's mode.
    // SQLite gives the WAL and shared-memory files the database file's mode.
    closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
  }
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  if (file) for (const side of [`${path}-wal`, `${path}-shm`]) if (existsSync(side)) chmodSync(side, 0o600);
  // NORMAL in WAL mode is durable across process crashes; only an OS crash can lose the last commits.
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  timeAutocommits(sqlite);
  const db = drizzle({ client: sqlite, schema }) as Db;
  const migrations = loadMigrations();
  const applied = sqlite.query("select name from sqlite_master where type = 'table' and name = '__drizzle_migrations'").get()
    ? (sqlite.query("select max(created_at) as last from __drizzle_migrations").get() as { last: number | null }).last
    : null;
  const known = migrations.at(-1)!.folderMillis;
  if (applied !== null && applied > known) {
    sqlite.close();
    throw new DatabaseTooNew(`${path} was last migrated by a newer ebb (schema of ${new Date(applied).toISOString()}, this ebb knows up to ${new Date(known).toISOString()}); run that ebb, or give this one another database with --db`);
  }
  const dialect = (db as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => void } }).dialect;
  const session = (db as unknown as { session: unknown }).session;
  dialect.migrate(migrations, session, { migrationsFolder: "migrations" });
  return db;
}
