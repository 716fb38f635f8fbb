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

/**
 * What other users may not see, as Slurm's PrivateData (controller config `privateData`): by
 * default every token sees every job's public part and every node; with "jobs" a user sees only
 * the jobs it may act on, with "nodes" only admins list nodes, with "usage" a user's `ebb usage`
 * shows that user alone. A job's private part (its command, directory, files, environment,
 * output) is never shown to other users, whatever this says.
 */
export const PRIVATE_DATA = ["jobs", "nodes", "usage"] as const;
export type PrivateDataKind = (typeof PRIVATE_DATA)[number];
export type PrivateData = ReadonlySet<PrivateDataKind>;

/**
 * How much of job `id` (its owner and submitter in `row`) `scope` sees: "all" of a job it may act
 * on, the "public" part of another's unless jobs are private, else "none".
 */
export function sightOf(scope: Scope, id: number, row: { user: string | null; submittedBy: number | null } | undefined, privateData: PrivateData): "all" | "public" | "none" {
  if (scopeMayActOn(scope, id, row)) return "all";
  return privateData.has("jobs") || row === undefined ? "none" : "public";
}
