/**
 * Who is calling, and which jobs it may act on: the rule the HTTP API and the launcher's WebSocket
 * both apply (a token is one of the cluster's API token, a job's token, or a user's token).
 */
import { Refusal } from "./refusal.ts";

/** A per-user token's caller (`ebb token create`): acts on that user's jobs, or on all as an admin. */
export interface UserScope {
  user: string;
  admin: boolean;
}

/** Who is calling: the API token ("all"), a job's token (its job id), or a user's token. */
export type Scope = "all" | number | UserScope;

/** The cluster's API token and admins' tokens act on everything. */
export function isAdmin(scope: Scope): boolean {
  return scope === "all" || (typeof scope === "object" && scope.admin);
}

/**
 * Whether `scope` may act on job `id`, whose row (its user, and the job that submitted it) is
 * `row` (undefined: no such job): an admin on any; a user's token on that user's jobs; a job's
 * token on its job and the jobs it submitted.
 */
export function scopeMayActOn(scope: Scope, id: number, row: { user: string | null; submittedBy: number | null } | undefined): boolean {
  if (isAdmin(scope) || scope === id) return true;
  if (typeof scope === "object") return row !== undefined && row.user === scope.user;
  return row?.submittedBy === scope;
}

/** Why `scope` may not act on job `id` (the caller found it may not). */
export function notYourJob(scope: Scope, id: number): Refusal {
  if (scope === "all") return new Refusal("forbidden", "forbidden", `job ${id} is not one this token may act on`);
  return new Refusal(
    "forbidden",
    "forbidden",
    typeof scope === "object" ? `job ${id} is not ${scope.user}'s; a user's token acts on that user's jobs only` : `this token is for job ${scope}, not job ${id} (a job's token acts on its job and the jobs it submitted)`,
  );
}
