/**
 * Loads the drizzle-kit migrations from migrations/: from the files embedded in the compiled
 * binary when there are any, else from the source checkout. The records match what drizzle's own
 * readMigrationFiles builds, so both paths agree on which migrations were applied.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { z } from "zod";

const Journal = z.object({
  entries: z.array(z.object({ tag: z.string(), when: z.number(), breakpoints: z.boolean() })),
});

type Reader = (name: string) => string | undefined;

function embeddedReader(): Reader | undefined {
  const files = Bun.embeddedFiles as Array<Blob & { name: string }>;
  if (!files.some((f) => f.name.endsWith("_journal.json"))) return undefined;
  const byName = new Map<string, string>();
  return (name) => {
    const hit = files.find((f) => f.name === name || f.name.endsWith(`/${name}`));
    if (!hit) return undefined;
    if (!byName.has(name)) byName.set(name, readFileSync(embeddedPath(hit), "utf8"));
    return byName.get(name);
  };
}

/** Embedded blobs are readable through their $bunfs path. */
function embeddedPath(file: Blob & { name: string }): string {
  return file.name.startsWith("/") ? file.name : `/$bunfs/root/${file.name}`;
}

function folderReader(): Reader {
  const dir = new URL("../../migrations/", import.meta.url);
  return (name) => {
    try {
      return readFileSync(new URL(name, dir), "utf8");
    } catch {
      return undefined;
    }
  };
}

export function loadMigrations(): MigrationMeta[] {
  const read = embeddedReader() ?? folderReader();
  const journalText = read("meta/_journal.json") ?? read("_journal.json");
  if (!journalText) throw new Error("migrations/meta/_journal.json is missing from this build");
  const journal = Journal.parse(JSON.parse(journalText));
  return journal.entries.map((entry) => {
    const sql = read(`${entry.tag}.sql`);
    if (sql === undefined) throw new Error(`migration ${entry.tag}.sql is missing from this build`);
    return {
      sql: sql.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(sql).digest("hex"),
    };
  });
}
