/** GET /v1/openapi.json: the API described from the same zod schemas that validate it. */
import { z } from "zod";
import { ErrorResponse, Health, JobDetail, JobSubmit, JobView, NodeView, ResizeRequest, StepCreate, StepGrant, SubmitResult } from "./schemas.ts";

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" });
const json = (s: z.ZodType, description: string) => ({ description, content: { "application/json": { schema: schema(s) } } });
const errors = {
  "400": json(ErrorResponse, "invalid request; error.field names the bad field"),
  "401": json(ErrorResponse, "missing or invalid bearer token"),
  "404": json(ErrorResponse, "no such job"),
};
const jobId = { name: "id", in: "path", required: true, schema: { type: "integer", minimum: 1 } };

let cached: unknown;

export function openApiDocument(version: string): unknown {
  cached ??= {
    openapi: "3.1.0",
    info: { title: "ebb", version, description: "Resource manager for elastic parallel jobs" },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths: {
      "/v1/health": { get: { summary: "Liveness (no auth)", security: [], responses: { "200": json(Health, "controller is up") } } },
      "/v1/jobs": {
        post: { summary: "Submit a job", requestBody: { required: true, ...json(JobSubmit, "the job") }, responses: { "201": json(SubmitResult, "job id"), ...errors } },
        get: {
          summary: "List jobs",
          parameters: [
            { name: "state", in: "query", schema: { type: "string" }, description: "comma-separated states, e.g. PENDING,RUNNING" },
            { name: "limit", in: "query", schema: { type: "integer", default: 1000 }, description: "at most this many, the newest" },
          ],
          responses: { "200": json(z.object({ jobs: z.array(JobView) }), "jobs in id order"), ...errors },
        },
      },
      "/v1/jobs/{id}": {
        get: { summary: "A job with its allocation, steps and events", parameters: [jobId], responses: { "200": json(JobDetail, "the job"), ...errors } },
        delete: { summary: "Cancel a job", parameters: [jobId], responses: { "200": json(z.object({ id: z.int(), cancelled: z.boolean() }), "cancelled"), ...errors, "409": json(ErrorResponse, "already finished") } },
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
