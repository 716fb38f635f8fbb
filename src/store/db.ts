/** Opens the SQLite job store (WAL) and applies pending migrations. */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import * as schema from "./schema.ts";
import { loadMigrations } from "./migrations.ts";
import { Refusal } from "../domain/refusal.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** The database was migrated by a newer ebb than this one: its schema is unknown here. */
export class DatabaseTooNew extends Error {}

/**
 * A write the database cannot take now: its disk is full, it is read-only, or the disk failed
 * (SQLITE_FULL, SQLITE_READONLY*, SQLITE_IOERR*), or it is refused while the store is known to be
 * so. Nothing of the write was kept. A refusal like any other (the API's 503); the message says why
 * and what to do (the guard words it).
 */
export class StoreUnavailable extends Refusal {
  constructor(
    /** SQLITE_FULL, SQLITE_READONLY... */
    readonly sqliteCode: string,
    message: string,
  ) {
    super("unavailable", "unavailable", message);
  }
}

/** The SQLite code of an error that says the storage cannot be written, else undefined. */
export function storageFailure(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_(FULL|READONLY|IOERR|CANTOPEN)/.test(code) ? code : undefined;
}

/** Who decides whether writes may go now, and hears of each that failed for want of storage. */
export interface WriteGuard {
  /** The error a write gets now without being tried; undefined: it may go. */
  refusal(): StoreUnavailable | undefined;
  /** A write failed with `code`: returns the error its caller gets. */
  failed(code: string, detail: string): StoreUnavailable;
}

const guards = new WeakMap<Database, WriteGuard>();

/** From now on the writes to `db` are refused or let through by `guard`, which hears of their storage failures. */
export function guardWrites(db: Db, guard: WriteGuard): void {
  guards.set(db.$client, guard);
}

/**
 * Runs one write (a statement outside a transaction, or a whole transaction) under the database's
 * guard: refused while it says so; a storage failure becomes StoreUnavailable. Unguarded: just runs.
 */
export function guarded<T>(sqlite: Database, write: () => T): T {
  const guard = guards.get(sqlite);
  if (!guard) return write();
  const refused = guard.refusal();
  if (refused) throw refused;
  try {
    return write();
  } catch (e) {
    const code = storageFailure(e);
    if (code === undefined || e instanceof StoreUnavailable) throw e;
    throw guard.failed(code, (e as Error).message);
  }
}

/** Who is told the duration (ms) of each write statement run outside a transaction (SQLite commits it alone). */
const autocommitObservers = new WeakMap<Database, (ms: number) => void>();

/** Tells `fn` how long each autocommitted write took, commit included (transactions: JobStore.onCommit). */
export function onAutocommit(db: Db, fn: (ms: number) => void): void {
  autocommitObservers.set(db.$client, fn);
}

/**
 * Times and guards the write statements SQLite runs outside a transaction: each is its own
 * transaction and commit (a transaction is timed and guarded as a whole: JobStore.tx). Every
 * statement drizzle makes goes through Database.prepare (prepared ones included, made once), so its
 * write statements get their run/get/all/values wrapped when no transaction is open.
 */
function wrapAutocommits(sqlite: Database): void {
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((query: string, ...rest: unknown[]) => {
    const st = (prepare as (q: string, ...r: unknown[]) => ReturnType<Database["prepare"]>)(query, ...rest);
    if (!/^\s*(insert|update|delete|replace)\b/i.test(query)) return st;
    for (const m of ["run", "get", "all", "values"] as const) {
      const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        if (sqlite.inTransaction) return call(...args);
        const fn = autocommitObservers.get(sqlite);
        if (!fn) return guarded(sqlite, () => call(...args));
        const t0 = performance.now();
        try {
          return guarded(sqlite, () => call(...args));
        } finally {
          fn(performance.now() - t0);
        }
      };
    }
    return st;
  }) as Database["prepare"];
}

/** Databases opened without their shared-memory file (see `openSqlite`). */
const exclusive = new WeakSet<Database>();

/** Whether `db` was opened in exclusive locking mode, as on a full disk: no other process may read it while it is open. */
export function openedExclusive(db: Db): boolean {
  return exclusive.has(db.$client);
}

/**
 * The page size of a new database (one that exists keeps its own: SQLite changes it only by a
 * VACUUM outside WAL mode). Every commit appends each page it changed to the WAL, whole, and a
 * job's commits each change a few rows of a few tables and their indexes: at SQLite's default of
 * 4 KiB the controller wrote ~110 KiB per null job for rows of ~1 KiB, at 1 KiB ~36 KiB (a job
 * with a 4.6 KB environment: 151 -> 67 KiB), at 512 bytes (SQLite's least) ~19 KiB: a null job's
 * rows are 50-230 bytes, so its commits touch about as many pages at half the size (a job row
 * fits a 512-byte page; a larger one, like an environment, goes on in overflow pages).
 */
const PAGE_BYTES = 512;

/**
 * WAL mode needs a shared-memory file beside the database, which SQLite cannot create on a full
 * disk (SQLITE_IOERR_SHMSIZE). Then the database is opened in exclusive locking mode, which keeps
 * that index in the process's memory: it reads, and writes once there is space again.
 */
function openSqlite(path: string): Database {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec(`PRAGMA page_size = ${PAGE_BYTES}`);
  try {
    sqlite.exec("PRAGMA journal_mode = WAL");
    return sqlite;
  } catch (e) {
    if (storageFailure(e) === undefined) throw e;
    sqlite.close();
  }
  const alone = new Database(path, { create: true, strict: true });
  alone.exec(`PRAGMA page_size = ${PAGE_BYTES}`);
  alone.exec("PRAGMA locking_mode = EXCLUSIVE");
  alone.exec("PRAGMA journal_mode = WAL");
  exclusive.add(alone);
  return alone;
}

/** Runs a file-system change that an existing database does without, when its disk is full or read-only. */
function unlessFullOrReadOnly(path: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (!((code === "ENOSPC" || code === "EROFS" || code === "EDQUOT") && existsSync(path))) throw e;
  }
}

/** Bytes of WAL past which the commit that crosses them checkpoints (SQLite's default: 1,000 pages). */
const WAL_BOUND_BYTES = 10 << 20;

/**
 * Checkpoints the WAL every `ms` (PASSIVE: never waits for a reader), off the path of any commit:
 * SQLite's own checkpoint runs inside the commit that crosses its threshold, an fsync and the
 * copy of every page changed since the last one, while a request waits. Each page is copied once
 * per checkpoint however often it changed meanwhile. A checkpoint that cannot be made now (a full
 * disk, a reader) is tried again at the next tick. Returns the stop.
 */
export function checkpointEvery(db: Db, ms: number): () => void {
  const timer = setInterval(() => {
    try {
      db.$client.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch (e) {
      if (!String((e as { code?: unknown } | null)?.code ?? "").startsWith("SQLITE_")) throw e;
    }
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export function openDb(path: string): Db {
  const file = path !== ":memory:" && !path.startsWith("file:");
  if (file) {
    unlessFullOrReadOnly(dirname(path), () => mkdirSync(dirname(path), { recursive: true }));
    // Every job's environment and script are in here: owner only, whatever the directory's mode.
    // SQLite gives the WAL and shared-memory files the database file's mode.
    unlessFullOrReadOnly(path, () => {
      closeSync(openSync(path, "a", 0o600));
      chmodSync(path, 0o600);
    });
  }
  const sqlite = file ? openSqlite(path) : new Database(path, { create: true, strict: true });
  if (!file) sqlite.exec("PRAGMA journal_mode = WAL");
  if (file) for (const side of [`${path}-wal`, `${path}-shm`]) if (existsSync(side)) unlessFullOrReadOnly(side, () => chmodSync(side, 0o600));
  // NORMAL in WAL mode is durable across process crashes; only an OS crash can lose the last commits.
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  // A writer that checkpoints from a timer (`checkpointEvery`) keeps checkpoints out of its
  // commits; SQLite's own, in the commit that crosses this many pages, is the bound of the WAL.
  // In pages, of this database's own size (512 bytes, 1 or 4 KiB).
  const pageBytes = (sqlite.query("PRAGMA page_size").get() as { page_size: number }).page_size;
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${Math.ceil(WAL_BOUND_BYTES / pageBytes)}`);
  sqlite.exec("PRAGMA foreign_keys = ON");
  wrapAutocommits(sqlite);
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
