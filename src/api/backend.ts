/** What the HTTP API needs from the controller; roles/controller implements it. */
import type { z } from "zod";
import type { JobDetail, JobSubmit, JobView, NodeView, PartitionView, PlanView, PrioritySettings, PriorityView, ShareRowView, SignalRequest, JobUpdate, StartsView, StepCreate, StepGrant, StoreStatus, TimelineView, UsageView } from "./schemas.ts";
import type { JobFilter } from "../store/jobs.ts";
import type { PrivateData, Scope } from "../domain/scope.ts";

export interface ApiBackend {
  version: string;
  /** The cluster's name (SLURM_CLUSTER_NAME of its jobs; the config file's clusterName). */
  clusterName: string;
  /** A submission, answered once it is committed; a job token's is recorded as submitted by that job. */
  submit(req: JobSubmit, scope: Scope): Promise<{ id: number }>;
  /** When and where the job would start now (sbatch --test-only), without submitting it. */
  testOnly(req: JobSubmit, scope: Scope): Promise<{ start: string | null; nodes: string[]; message: string }>;
  /** What other users may not see (controller config `privateData`, as Slurm's PrivateData). */
  privateData: PrivateData;
  /**
   * The jobs, oldest first, a page at a time (the route streams them), and `next` when older ones
   * remain: those `scope` may see (domain/scope.ts sightOf), others' without their private part.
   */
  listJobs(filter: Omit<JobFilter, "visibleTo" | "owner">, scope: Scope): { pages: AsyncIterable<JobView[]>; next?: number };
  /** What each user (or `user`) used over [since, until] (epoch ms): jobs, node- and core-seconds. */
  usage(q: { since: number; until: number; user?: string }): Promise<UsageView>;
  /** The user a token acts for: its user's, its job's user, the controller's user for the API token. */
  userOf(scope: Scope): string;
  /** When the pending jobs `scope` may see are expected to start (squeue --start). */
  starts(scope: Scope): Promise<StartsView>;
  /**
   * The newest `limit` scheduling plans with the items `scope` may see (every job's, or with
   * private jobs its own unless an admin), newest first; with `jobId`, only that job's items;
   * undefined if that job does not exist.
   */
  listPlans(q: { jobId?: number; limit: number }, scope: Scope): PlanView[] | undefined;
  /** The job, once it has ended or `waitMs` have passed. */
  getJob(id: number, waitMs?: number): JobDetail | undefined | Promise<JobDetail | undefined>;
  /** The job id of task `task` of array `arrayJobId`. */
  arrayTask(arrayJobId: number, task: number): number | undefined;
  /** Cancel a job, or every active task of an array (unless `task`: the path named that one task). */
  cancel(id: number, task?: boolean): number[];
  /** Send a signal to a running job, or every running task of an array (scancel --signal); the ids signalled. */
  signal(id: number, req: SignalRequest, task?: boolean): number[];
  hold(id: number, task?: boolean): number[];
  release(id: number, task?: boolean): number[];
  /** Put a running batch job (an array's id: its running tasks) back in the queue, to start again (scontrol requeue); the ids requeued. */
  requeue(id: number, task?: boolean): number[];
  /** End a running batch job now with `exitCode` (COMPLETED for 0, else FAILED), what is left of it killed: salloc's end once its command has exited. */
  complete(id: number, exitCode: number): number[];
  /** scontrol update: a pending job's name, time limit, dependency; a running one's name and time limit (only an admin raises it); the fields changed. */
  update(id: number, req: JobUpdate, scope: Scope): string[];
  /** Start resizing a running elastic job to `nodes` nodes, as `scope` asked (a user's own resize does not raise its limit). */
  resize(jobId: number, nodes: number, scope: Scope): { adaptationId: number };
  createStep(jobId: number, req: StepCreate): StepGrant | Promise<StepGrant>;
  listNodes(): NodeView[];
  /** The partitions (none: the controller has none), with their nodes' states and jobs. */
  listPartitions(): PartitionView[];
  /** Every eligible waiting job's priority and factors, in queue order (`jobId`: that job's alone, if it is one), and how priorities are made. */
  priorities(jobId?: number): { settings: z.infer<typeof PrioritySettings>; jobs: PriorityView[] };
  /** Every user's shares, usage and fair-share factor. */
  shares(): { settings: z.infer<typeof PrioritySettings>; users: ShareRowView[] };
  /** Drain a node (reason set; `owner`: its owner wants it back, its jobs move off) or resume it (null); false when there is no such node. */
  drain(name: string, reason: string | null, owner?: boolean): boolean;
  counts(): { nodes: number; jobs: number };
  /** Whether the store takes writes; if not, why, since when, and how many reports wait to be written. */
  storage(): StoreStatus;
  /** The job a token may act on: "all" for the API token, a job id for a job token, undefined if invalid. */
  authorize(token: string): Scope | undefined;
  /** How much of job `id` `scope` sees: all of it, its public part, or nothing (domain/scope.ts sightOf). */
  sight(scope: Scope, id: number): "all" | "public" | "none";
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
