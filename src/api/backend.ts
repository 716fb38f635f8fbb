/** What the HTTP API needs from the controller; roles/controller implements it. */
import type { z } from "zod";
import type { JobDetail, JobSubmit, JobView, NodeView, PartitionView, PlanView, PrioritySettings, PriorityView, ShareRowView, StepCreate, StepGrant, StoreStatus, TimelineView } from "./schemas.ts";
import type { JobFilter } from "../store/jobs.ts";

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

export interface ApiBackend {
  version: string;
  /** A submission; a job token's is recorded as submitted by that job. */
  submit(req: JobSubmit, scope: Scope): { id: number };
  /** When and where the job would start now (sbatch --test-only), without submitting it. */
  testOnly(req: JobSubmit, scope: Scope): Promise<{ start: string | null; nodes: string[]; message: string }>;
  /** The jobs, oldest first, a page at a time (the route streams them), and `next` when older ones remain. */
  listJobs(filter: Omit<JobFilter, "visibleTo" | "owner">, scope: Scope): { pages: AsyncIterable<JobView[]>; next?: number };
  /**
   * The newest `limit` scheduling plans with the items `scope` may see (its own jobs' unless an
   * admin), newest first; with `jobId`, only that job's items; undefined if that job does not exist.
   */
  listPlans(q: { jobId?: number; limit: number }, scope: Scope): PlanView[] | undefined;
  /** The job, once it has ended or `waitMs` have passed. */
  getJob(id: number, waitMs?: number): JobDetail | undefined | Promise<JobDetail | undefined>;
  /** The job id of task `task` of array `arrayJobId`. */
  arrayTask(arrayJobId: number, task: number): number | undefined;
  /** Cancel a job, or every active task of an array (unless `task`: the path named that one task). */
  cancel(id: number, task?: boolean): number[];
  hold(id: number, task?: boolean): number[];
  release(id: number, task?: boolean): number[];
  /** Start resizing a running elastic job to `nodes` nodes. */
  resize(jobId: number, nodes: number): { adaptationId: number };
  createStep(jobId: number, req: StepCreate): StepGrant | Promise<StepGrant>;
  listNodes(): NodeView[];
  /** The partitions (none: the controller has none), with their nodes' states and jobs. */
  listPartitions(): PartitionView[];
  /** Every eligible waiting job's priority and factors, in queue order, and how priorities are made. */
  priorities(): { settings: z.infer<typeof PrioritySettings>; jobs: PriorityView[] };
  /** Every user's shares, usage and fair-share factor. */
  shares(): { settings: z.infer<typeof PrioritySettings>; users: ShareRowView[] };
  /** Drain a node (reason set) or resume it (null); false when there is no such node. */
  drain(name: string, reason: string | null): boolean;
  counts(): { nodes: number; jobs: number };
  /** Whether the store takes writes; if not, why, since when, and how many reports wait to be written. */
  storage(): StoreStatus;
  /** The job a token may act on: "all" for the API token, a job id for a job token, undefined if invalid. */
  authorize(token: string): Scope | undefined;
  /** Whether `scope` may act on job `id`: its own job, or one it submitted. */
  mayActOn(scope: Scope, id: number): boolean;
  /** Issue a token for `user` (admins only); returns the token, shown once. */
  createToken(user: string, admin: boolean): string;
  /** Whether a scraper with this bearer token (undefined: none) may read /metrics. */
  mayScrape(token: string | undefined): boolean;
  /** The Prometheus text exposition of the controller's metrics. */
  metrics(): string;
  /** The allocation timeline of the last `windowSec` seconds. */
  timeline(windowSec: number): TimelineView;
  /**
   * The live timeline: `send` gets the window's whole timeline (event "timeline") at once, then
   * what changed (event "delta", a TimelineDelta), each as its JSON text; returns the unsubscribe.
   */
  watchTimeline(windowSec: number, send: (event: "timeline" | "delta", json: string) => void): () => void;
}
