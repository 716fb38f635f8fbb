/** GET /v1/openapi.json: the API described from the same zod schemas that validate it. */
import { z } from "zod";
import { ErrorResponse, Health, HoldResult, JobDetail, JobSubmit, JobView, NodeView, ResizeRequest, StepCreate, StepGrant, SubmitResult, TestOnlyResult } from "./schemas.ts";

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" });
const json = (s: z.ZodType, description: string) => ({ description, content: { "application/json": { schema: schema(s) } } });
const errors = {
  "400": json(ErrorResponse, "invalid request; error.field names the bad field"),
  "401": json(ErrorResponse, "missing or invalid bearer token"),
  "403": json(ErrorResponse, "a job's token acting on a job that is neither its own nor one it submitted"),
  "404": json(ErrorResponse, "no such job"),
};
const jobId = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[1-9][0-9]*(_[0-9]+)?$" },
  description: "a job id, or ARRAY_TASK (12_3) for one task of an array; an array's own id stands for all of its tasks where an action can take several",
};

let cached: unknown;

export function openApiDocument(version: string): unknown {
  cached ??= {
    openapi: "3.1.0",
    info: { title: "ebb", version, description: "Resource manager for elastic parallel jobs" },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths: {
      "/metrics": {
        get: {
          summary: "Prometheus metrics (text exposition format 0.0.4): the API token, the controller's --metrics-token, or none with --metrics-open",
          responses: { "200": { description: "the metrics", content: { "text/plain; version=0.0.4": { schema: { type: "string" } } } }, "401": errors["401"] },
        },
      },
      "/v1/health": { get: { summary: "Liveness (no auth)", security: [], responses: { "200": json(Health, "controller is up") } } },
      "/v1/jobs": {
        post: { summary: "Submit a job", requestBody: { required: true, ...json(JobSubmit, "the job") }, responses: { "201": json(SubmitResult, "job id"), ...errors } },
        get: {
          summary: "List jobs",
          parameters: [
            { name: "state", in: "query", schema: { type: "string" }, description: "comma-separated states, e.g. PENDING,RUNNING" },
            { name: "limit", in: "query", schema: { type: "integer", default: 1000 }, description: "at most this many, the newest" },
            { name: "since", in: "query", schema: { type: "string", format: "date-time" }, description: "jobs still active, or ended at or after this time" },
            { name: "until", in: "query", schema: { type: "string", format: "date-time" }, description: "jobs submitted at or before this time" },
            { name: "name", in: "query", schema: { type: "string" }, description: "jobs of this name" },
            { name: "user", in: "query", schema: { type: "string" }, description: "jobs this user submitted" },
            { name: "array", in: "query", schema: { type: "integer" }, description: "the tasks of this array" },
          ],
          responses: { "200": json(z.object({ jobs: z.array(JobView) }), "jobs in id order"), ...errors },
        },
      },
      "/v1/jobs/test": {
        post: {
          summary: "When and where a job would start if submitted now (sbatch --test-only); nothing is submitted",
          requestBody: { required: true, ...json(JobSubmit, "the job") },
          responses: { "200": json(TestOnlyResult, "the prediction"), ...errors },
        },
      },
      "/v1/jobs/{id}": {
        get: {
          summary: "A job with its allocation, steps and events",
          parameters: [jobId, { name: "wait", in: "query", schema: { type: "number", minimum: 0, maximum: 50 }, description: "answer once the job has ended, or after this many seconds" }],
          responses: { "200": json(JobDetail, "the job"), ...errors },
        },
        delete: {
          summary: "Cancel a job (an array's id: all of its active tasks)",
          parameters: [jobId],
          responses: { "200": json(z.object({ id: z.int(), cancelled: z.boolean(), jobs: z.array(z.int()) }), "cancelled; jobs: the ids cancelled"), ...errors, "409": json(ErrorResponse, "already finished") },
        },
      },
      "/v1/jobs/{id}/hold": {
        post: { summary: "Hold a pending job (an array's id: its pending tasks): JobHeldUser until released", parameters: [jobId], responses: { "200": json(HoldResult, "the jobs held"), ...errors, "409": json(ErrorResponse, "not pending") } },
      },
      "/v1/jobs/{id}/release": {
        post: { summary: "Release a held job (an array's id: its pending tasks)", parameters: [jobId], responses: { "200": json(HoldResult, "the jobs released"), ...errors, "409": json(ErrorResponse, "not pending") } },
      },
      "/v1/jobs/{id}/resize": {
        post: {
          summary: "Resize a running elastic job (the 6-step adaptation; the job is ADAPTING until it commits)",
          parameters: [jobId],
          requestBody: { required: true, ...json(ResizeRequest, "the new node count") },
          responses: { "202": json(z.object({ id: z.int(), adaptationId: z.int() }), "adaptation started"), ...errors, "409": json(ErrorResponse, "not elastic, not running, already adapting, no idle nodes, or no elastic step") },
        },
      },
      "/v1/jobs/{id}/steps": {
        post: { summary: "Create a step in a running job (used by ebb run)", parameters: [jobId], requestBody: { required: true, ...json(StepCreate, "the step") }, responses: { "201": json(StepGrant, "nodes and credential"), ...errors } },
      },
      "/v1/nodes": { get: { summary: "List nodes", responses: { "200": json(z.object({ nodes: z.array(NodeView) }), "nodes"), ...errors } } },
    },
  };
  return cached;
}
