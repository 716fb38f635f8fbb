/** Per-user API tokens: stored as SHA-256 hashes, looked up by the hash of what a caller presents. */
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { userTokens } from "./schema.ts";

export type UserTokenRow = typeof userTokens.$inferSelect;

export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function insertUserToken(db: Db, token: string, user: string, admin: boolean, now = Date.now()): void {
  db.insert(userTokens).values({ hash: tokenHash(token), user, admin, createdAt: now }).run();
}

export function findUserToken(db: Db, token: string): UserTokenRow | undefined {
  return db.select().from(userTokens).where(eq(userTokens.hash, tokenHash(token))).get();
}
