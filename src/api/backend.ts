/** What the HTTP API needs from the controller; roles/controller implements it. */
import type { JobDetail, JobState, JobSubmit, JobView, NodeView, StepCreate, StepGrant } from "./schemas.ts";

export interface ApiBackend {
  version: string;
  submit(req: JobSubmit): { id: number };
  listJobs(filter: { states?: JobState[]; limit: number }): JobView[];
  getJob(id: number): JobDetail | undefined;
  cancel(id: number): void;
  /** Start resizing a running elastic job to `nodes` nodes. */
  resize(jobId: number, nodes: number): { adaptationId: number };
  createStep(jobId: number, req: StepCreate): StepGrant | Promise<StepGrant>;
  listNodes(): NodeView[];
  counts(): { nodes: number; jobs: number };
  /** The job a token may act on: "all" for the API token, a job id for a job token, undefined if invalid. */
  authorize(token: string): "all" | number | undefined;
}
