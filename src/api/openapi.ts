/**
 * GET /v1/openapi.json: generated from the routes the app really has (hono's route list) and the
 * zod schemas that validate them. Each route's entry below gives what its handler does not say by
 * itself: an operationId, a summary, its schemas and the error statuses it can answer. A route
 * with no entry, or an entry with no route, stops the document from being built (the OpenAPI
 * test fails), so the document cannot drift from the routes again.
 */
import { z } from "zod";
import { AgentToController, ControllerToAgent, REFUSED } from "../proto/agent.ts";
import { ControllerToLauncher, LauncherToController, LAUNCHERS_REFUSED, PROTOCOL_REFUSED } from "../proto/launcher.ts";
import {
  DrainRequest,
  DrainResult,
  ErrorResponse,
  Health,
  HoldResult,
  JobDetail,
  JobGetQuery,
  JobListQuery,
  JobSubmit,
  JobView,
  NodeView,
  PartitionView,
  PlanListQuery,
  PlanView,
  PrioritySettings,
  PriorityView,
  PriorityQuery,
  ResizeRequest,
  SignalRequest,
  JobUpdate,
  CompleteRequest,
  StartsView,
  ShareRowView,
  StepCreate,
  StepGrant,
  SubmitResult,
  TestOnlyResult,
  TimelineDelta,
  TimelineQuery,
  TimelineView,
  TokenCreate,
  TokenCreated,
  UsageQuery,
  UsageView,
} from "./schemas.ts";

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 426 | 429 | 503;

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  /** An event stream's events: name -> the JSON schema of its data (given as x-events). */
  events?: Record<string, () => z.ZodType>;
  /** No bearer token needed. */
  open?: boolean;
  query?: () => z.ZodType;
  body?: () => z.ZodType;
  /** The body may be left out. */
  optionalBody?: boolean;
  /** The success answer: a JSON schema, or another media type with a plain schema. */
  ok: { status: number; description: string; json?: () => z.ZodType; media?: string };
  errors: ErrorStatus[];
  /** What a status means for this route, where the general words are not enough. */
  notes?: Partial<Record<ErrorStatus, string>>;
}

const ERROR_TEXT: Record<ErrorStatus, string> = {
  400: "invalid request; error.field names the bad field",
  401: "missing or invalid bearer token",
  403: "a token acting beyond its jobs (a user's token: that user's; a job's token: its job and the jobs it submitted), or reading what the controller keeps private (privateData) or only admins may do",
  404: "no such job",
  409: "the job's state does not allow it",
  413: "the request body is over 2 MiB",
  426: "not a WebSocket upgrade",
  429: "too many at once: the message says the limit and what to do",
  503: "code unavailable: the controller's database takes no writes now (its disk is full or read-only; the message says which and what to do); nothing was done, reads still work, and it resumes by itself (GET /v1/health: store)",
};

const JOB_ID_PARAM = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[1-9][0-9]*(_[0-9]+)?$" },
  description: "a job id, or ARRAY_TASK (12_3) for one task of an array; an array's own id stands for all of its tasks where an action can take several",
};

const ON_JOB: ErrorStatus[] = [400, 401, 403, 404];
const WITH_BODY: ErrorStatus[] = [400, 401, 413];

/** Every route of createApi, by "METHOD /path" as hono has it. */
const OPERATIONS: Record<string, Operation> = {
  "GET /": { operationId: "getDashboard", summary: "The web dashboard (one HTML page; sign in with the API token)", open: true, ok: { status: 200, description: "the page", media: "text/html" }, errors: [] },
  "GET /ui": { operationId: "redirectDashboard", summary: "Moved to /", open: true, ok: { status: 301, description: "see /" }, errors: [] },
  "GET /metrics": {
    operationId: "getMetrics",
    summary: "Prometheus metrics (text exposition format 0.0.4): the API token, the controller's --metrics-token, or none with --metrics-open",
    ok: { status: 200, description: "the metrics", media: "text/plain" },
    errors: [401],
  },
  "GET /v1/health": { operationId: "getHealth", summary: "Liveness (no auth)", open: true, ok: { status: 200, description: "controller is up", json: () => Health }, errors: [] },
  "GET /v1/openapi.json": { operationId: "getOpenApi", summary: "This document (no auth)", open: true, ok: { status: 200, description: "OpenAPI 3.1", json: () => z.record(z.string(), z.unknown()) }, errors: [] },
  "POST /v1/jobs": {
    operationId: "submitJob",
    summary: "Submit a job",
    body: () => JobSubmit,
    ok: { status: 201, description: "job id", json: () => SubmitResult },
    errors: [...WITH_BODY, 403, 409],
    notes: { 403: "code partition_not_allowed: the user may not use the partition (its allowUsers / allowGroups)", 409: "code max_submit_jobs: the user has as many jobs pending or running as MaxSubmitJobs allows (on the cluster or in the partition); code max_job_count: the controller holds its --max-job-count jobs, or the user half of them" },
  },
  "POST /v1/jobs/test": {
    operationId: "testJob",
    summary: "When and where a job would start if submitted now (sbatch --test-only); nothing is submitted",
    body: () => JobSubmit,
    ok: { status: 200, description: "the prediction (at most 200 job ends ahead; past them start is null and the message says so)", json: () => TestOnlyResult },
    errors: [...WITH_BODY, 403, 409],
    notes: { 403: "code partition_not_allowed: the user may not use the partition", 409: "code max_submit_jobs: a submission now would pass MaxSubmitJobs; code max_job_count: or the controller's --max-job-count" },
  },
  "GET /v1/jobs": {
    operationId: "listJobs",
    summary: "List jobs: every user's, another user's without its private part (private: true); with the controller's privateData \"jobs\", only those the token may act on", query: () => JobListQuery, ok: { status: 200, description: "the newest `limit` jobs, in id order, streamed as read; `next` when older ones remain: pass it as `before` for the next page", json: () => z.object({ jobs: z.array(JobView), next: z.int().optional() }) },
    errors: [400, 401],
  },
  "GET /v1/starts": {
    operationId: "expectedStarts",
    summary: "When pending jobs are expected to start (squeue --start): one replay of the scheduler's plans, every running job taken to run to its limit, at most 200 job ends ahead; shared by every caller for 5 s",
    ok: { status: 200, description: "the estimates, soonest first", json: () => StartsView },
    errors: [401],
  },
  "GET /v1/usage": {
    operationId: "usage",
    summary: "What each user used over a window (ebb usage, like sreport): jobs, node- and core-seconds; with the controller's privateData \"usage\", a user's token reads its own alone",
    query: () => UsageQuery,
    ok: { status: 200, description: "usage by user, the most core-seconds first", json: () => UsageView },
    errors: [400, 401, 403],
    notes: { 403: "usage is private and `user` names another user" },
  },
  "GET /v1/jobs/:id": { operationId: "getJob", summary: "A job with its allocation, steps and events; another user's without its private part (private: true), or 403 with the controller's privateData \"jobs\"", query: () => JobGetQuery, ok: { status: 200, description: "the job", json: () => JobDetail }, errors: ON_JOB },
  "DELETE /v1/jobs/:id": {
    operationId: "cancelJob",
    summary: "Cancel a job (an array's id: all of its active tasks)",
    ok: { status: 200, description: "cancelled; jobs: the ids cancelled", json: () => z.object({ id: z.int(), cancelled: z.boolean(), jobs: z.array(z.int()) }) },
    errors: [...ON_JOB, 409],
    notes: { 409: "already finished" },
  },
  "POST /v1/jobs/:id/hold": { operationId: "holdJob", summary: "Hold a pending job (an array's id: its pending tasks): JobHeldUser until released", ok: { status: 200, description: "the jobs held", json: () => HoldResult }, errors: [...ON_JOB, 409], notes: { 409: "not pending" } },
  "POST /v1/jobs/:id/release": { operationId: "releaseJob", summary: "Release a held job (an array's id: its pending tasks)", ok: { status: 200, description: "the jobs released", json: () => HoldResult }, errors: [...ON_JOB, 409], notes: { 409: "not pending" } },
  "POST /v1/jobs/:id/requeue": { operationId: "requeueJob", summary: "Put a running batch job (an array's id: its running tasks) back in the queue, as scontrol requeue: what is left of its run is killed, and it starts again from its beginning (SLURM_RESTART_COUNT one more)", ok: { status: 200, description: "the jobs requeued", json: () => HoldResult }, errors: [...ON_JOB, 409], notes: { 409: "not a running batch job" } },
  "POST /v1/jobs/:id/complete": {
    operationId: "completeJob",
    summary: "End a running batch job now with this exit code (COMPLETED for 0, else FAILED), what is left of it killed: salloc's end once its command has exited, as Slurm's salloc completes its job with the command's status",
    body: () => CompleteRequest,
    ok: { status: 200, description: "the jobs ended", json: () => HoldResult },
    errors: [...ON_JOB, 409, 413],
    notes: { 409: "not a running batch job" },
  },
  "PATCH /v1/jobs/:id": {
    operationId: "updateJob",
    summary: "Change a job, as scontrol update: a pending job's name, time limit, dependency (\"\": none), node range (minNodes, maxNodes: NumNodes=MIN[-MAX]) and partition, a running job's name and time limit, a running batch job's smaller node count (minNodes: it gives back its last nodes, as Slurm's shrink); only an admin raises a time limit (a user may lower it); an array's task is refused",
    body: () => JobUpdate,
    ok: { status: 200, description: "the fields changed", json: () => z.object({ id: z.int(), changed: z.array(z.string()) }) },
    errors: [...ON_JOB, 409, 413],
    notes: { 403: "raising a time limit without being an admin, or a partition the job's owner may not use", 409: "ended, an array's task, an elastic job's nodes, or a dependency, node count or partition of a job not pending" },
  },
  "POST /v1/jobs/:id/signal": {
    operationId: "signalJob",
    summary: "Send a signal to a running job (an array's id: its running tasks), as scancel --signal: to its steps' processes (default), its batch shell (`batch`), or both (`full`)",
    body: () => SignalRequest,
    ok: { status: 200, description: "the jobs signalled", json: () => HoldResult },
    errors: [...ON_JOB, 409, 413],
    notes: { 409: "not running" },
  },
  "POST /v1/jobs/:id/resize": {
    operationId: "resizeJob",
    summary: "Resize a running elastic job (the adaptation protocol of docs/adaptation.md; the job is ADAPTING until it commits)",
    body: () => ResizeRequest,
    ok: { status: 202, description: "adaptation started", json: () => z.object({ id: z.int(), adaptationId: z.int() }) },
    errors: [...ON_JOB, 409, 413],
    notes: { 409: "not elastic, not running, already adapting, no idle nodes, or no elastic step" },
  },
  "POST /v1/jobs/:id/steps": {
    operationId: "createStep",
    summary: "Create a step in a running job (used by ebb run)",
    body: () => StepCreate,
    ok: { status: 201, description: "nodes and credential", json: () => StepGrant },
    errors: [...ON_JOB, 409, 413],
    notes: { 409: "the job is not running, or ended while the step waited for nodes; `step_busy`: an exact step whose CPUs the job's other exact steps hold now (retry when one of them ends)" },
  },
  "GET /v1/plans": {
    operationId: "listPlans",
    summary: "The scheduler's recent plans, newest first: each pass's spawn grants, starts and resizes with their nodes and reasons, what the controller's re-check accepted or rejected and why, and what became of each item; its reservations",
    description:
      "Items of every job are shown; with the controller's privateData \"jobs\", only the caller's (a user's token: that user's jobs; a job's token: its job and the jobs it submitted; the API token and admins: all), and plans with none of them are left out.",
    query: () => PlanListQuery,
    ok: { status: 200, description: "plans, newest first", json: () => z.object({ plans: z.array(PlanView) }) },
    errors: [400, 401, 403, 404],
    notes: { 403: "`job` names a job the token may not read", 404: "`job` names no job" },
  },
  "POST /v1/tokens": {
    operationId: "createToken",
    summary: "Issue a user's API token (the API token or an admin's only); the token is shown once, only its hash is kept",
    body: () => TokenCreate,
    ok: { status: 201, description: "the new token", json: () => TokenCreated },
    errors: [400, 401, 403, 413],
  },
  "GET /v1/partitions": {
    operationId: "listPartitions",
    summary: "The partitions: each one's nodes and their states (allocated, idle, other), cores, time limits, who may use it, priority tier, per-user limits, jobs (any token, like sinfo)",
    ok: { status: 200, description: "partitions, as configured (none: the controller has no partitions)", json: () => z.object({ partitions: z.array(PartitionView) }) },
    errors: [401],
  },
  "GET /v1/priority": {
    operationId: "listPriorities",
    summary: "Every eligible waiting job's priority and each of its weighted factors (age, fair share, job size) and tier, in queue order (any token, like sprio); `job`: that job's alone",
    query: () => PriorityQuery,
    ok: { status: 200, description: "the factors' settings, and the jobs in the order the scheduler takes them", json: () => z.object({ settings: PrioritySettings, jobs: z.array(PriorityView) }) },
    errors: [401],
  },
  "GET /v1/shares": {
    operationId: "listShares",
    summary: "Every user's shares, raw and decayed usage and fair-share factor (any token, like sshare)",
    ok: { status: 200, description: "the settings, and one row per user with shares in the config, usage, or jobs", json: () => z.object({ settings: PrioritySettings, users: z.array(ShareRowView) }) },
    errors: [401],
  },
  "GET /v1/nodes": { operationId: "listNodes", summary: "List nodes (admins only with the controller's privateData \"nodes\")", ok: { status: 200, description: "nodes", json: () => z.object({ nodes: z.array(NodeView) }) }, errors: [401, 403] },
  "POST /v1/nodes/:name/drain": {
    operationId: "drainNode",
    summary: "Drain a node: it takes no new work; the jobs on it run to their end. With owner: true it is not drained but its host state is owner until resumed: no new work, and the scheduler moves its elastic jobs off when the gain pays (the API token only)",
    body: () => DrainRequest,
    optionalBody: true,
    ok: { status: 200, description: "the node, drained", json: () => DrainResult },
    errors: [400, 401, 403, 404, 413],
    notes: { 404: "no such node" },
  },
  "POST /v1/nodes/:name/resume": {
    operationId: "resumeNode",
    summary: "Resume a drained node: it is scheduled again (the API token only)",
    ok: { status: 200, description: "the node, no longer drained", json: () => DrainResult },
    errors: [401, 403, 404],
    notes: { 404: "no such node" },
  },
  "GET /v1/timeline": { operationId: "getTimeline", summary: "The allocation timeline of the last `window` seconds: who held which node when, adaptations, pending jobs (admins only with the controller's privateData \"jobs\" or \"nodes\")", query: () => TimelineQuery, ok: { status: 200, description: "the timeline", json: () => TimelineView }, errors: [400, 401, 403] },
  "GET /v1/stream": {
    operationId: "streamTimeline",
    summary: "The live timeline as server-sent events (admins only with the controller's privateData \"jobs\" or \"nodes\")",
    description:
      "First `event: timeline` with the GET /v1/timeline body of the window; then, whenever the cluster changed (checked every 0.5 s, at most one delta every 1.5 s: a change is sent within 1.5 s), `event: delta` with what changed since the previous event (x-events.delta): jobs and pending entries that replace those of the same id, ids to remove, all nodes. Comment lines keep an idle stream open.",
    events: { timeline: () => TimelineView, delta: () => TimelineDelta },
    query: () => TimelineQuery,
    ok: { status: 200, description: "an event stream", media: "text/event-stream" },
    errors: [400, 401, 403, 429],
    notes: { 429: "the caller's user has STREAMS_PER_USER (8) streams open already: close one (a dashboard tab)" },
  },
};

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
const outSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: "output", unrepresentable: "any" }) as Record<string, unknown>;
const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });

function queryParameters(s: z.ZodType) {
  const json = schema(s) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, p]) => ({ name, in: "query", required: json.required?.includes(name) ?? false, schema: p, ...(typeof p.description === "string" ? { description: p.description } : {}) }));
}

function operation(op: Operation, pathParams: string[]) {
  const responses: Record<string, unknown> = {
    [String(op.ok.status)]: op.ok.json
      ? { description: op.ok.description, content: { "application/json": { schema: outSchema(op.ok.json()) } } }
      : op.ok.media
        ? { description: op.ok.description, content: { [op.ok.media]: { schema: { type: "string" } } } }
        : { description: op.ok.description },
  };
  for (const s of op.errors) responses[String(s)] = errorResponse(op.notes?.[s] ?? ERROR_TEXT[s]);
  const parameters = [...pathParams.map((p) => (p === "id" ? JOB_ID_PARAM : { name: p, in: "path", required: true, schema: { type: "string" } })), ...(op.query ? queryParameters(op.query()) : [])];
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.open ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body ? { requestBody: { required: !op.optionalBody, content: { "application/json": { schema: schema(op.body()) } } } } : {}),
    responses,
    ...(op.events ? { "x-events": Object.fromEntries(Object.entries(op.events).map(([name, s]) => [name, outSchema(s())])) } : {}),
  };
}

/** The /v1/launcher WebSocket, served beside the app (roles/controller/server.ts): described, not routed by hono. */
function launcherSocket() {
  return {
    get: {
      operationId: "launcherSocket",
      summary: "WebSocket of `ebb run` (the launcher): submit, follow the job, create steps and take resize orders on one connection",
      description: [
        `Upgrade with \`Authorization: Bearer\` (the API token or a job's token). Messages are JSON objects with a kind in \`t\`; the first one is \`hello\` with the launcher's protocol version (another version, or no hello, is answered by an error with code \`protocol_version\` and the connection is closed with code ${PROTOCOL_REFUSED}). A user holds at most a sixteenth of the controller's file descriptors in these connections (64 to 4,096; every token acting for the user counts): one more is answered by an error with code \`too_many_launchers\` and closed with code ${LAUNCHERS_REFUSED}.`,
        `Launcher to controller: ${LauncherToController.kinds.join(", ")}.`,
        `Controller to launcher: ${ControllerToLauncher.kinds.join(", ")}.`,
        "A request answered with an error carries the HTTP API's code, message and field.",
      ].join(" "),
      parameters: [
        { name: "Upgrade", in: "header", required: true, schema: { type: "string", const: "websocket" } },
        { name: "Connection", in: "header", required: true, schema: { type: "string" } },
      ],
      responses: { "101": { description: "switched to the WebSocket protocol" }, "401": errorResponse(ERROR_TEXT[401]), "426": errorResponse(ERROR_TEXT[426]) },
      "x-websocket": { subprotocol: null, messages: { fromClient: LauncherToController.kinds, fromServer: ControllerToLauncher.kinds } },
    },
  };
}

/**
 * The /v1/agent WebSocket (daemon-internal: each node's agent holds one), served beside the app
 * like the launcher's. Described so that the document covers every route; its messages are
 * proto/agent.ts's, and it authenticates with the cluster key, not the API token.
 */
function agentSocket() {
  return {
    get: {
      operationId: "agentSocket",
      summary: "WebSocket of a node's agent (daemon-internal): registration, heartbeats, job and step orders and their results on one connection",
      description: [
        "Upgrade with `Authorization: Bearer` and the cluster key (the file cluster.key in the controller's state directory), not the API token.",
        `Messages are JSON objects with a kind in \`t\`; the agent's first one is \`hello\`, with its protocol version (another one, or none, is refused with code ${REFUSED.refused}).`,
        `Agent to controller: ${AgentToController.kinds.join(", ")}.`,
        `Controller to agent: ${ControllerToAgent.kinds.join(", ")}.`,
        `A refused agent's connection is closed with a code of x-websocket.refusals (${Object.entries(REFUSED).map(([k, v]) => `${v} ${k}`).join(", ")}): it exits instead of retrying.`,
      ].join(" "),
      security: [{ clusterKey: [] }],
      parameters: [
        { name: "Upgrade", in: "header", required: true, schema: { type: "string", const: "websocket" } },
        { name: "Connection", in: "header", required: true, schema: { type: "string" } },
      ],
      responses: {
        "101": { description: "switched to the WebSocket protocol (with a wrong key too: the connection is then closed with code 4401, which the agent reports)" },
        "401": errorResponse("no upgrade asked, and not the cluster key"),
        "426": errorResponse(ERROR_TEXT[426]),
      },
      "x-websocket": { subprotocol: null, messages: { fromClient: AgentToController.kinds, fromServer: ControllerToAgent.kinds }, refusals: REFUSED },
    },
  };
}

let cached: { version: string; routes: string; doc: Record<string, unknown> } | undefined;

/** The document for the routes the app has (`routes`: hono's `app.routes`), served at `server`. */
export function openApiDocument(version: string, routes: readonly { method: string; path: string }[], server: string): unknown {
  const keys = [...new Set(routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path}`))];
  const routeKey = keys.join("\n");
  if (cached?.version !== version || cached.routes !== routeKey) {
    const missing = keys.filter((k) => !OPERATIONS[k]);
    if (missing.length) throw new Error(`OpenAPI: no description of the route${missing.length > 1 ? "s" : ""} ${missing.join(", ")} (src/api/openapi.ts)`);
    const stale = Object.keys(OPERATIONS).filter((k) => !keys.includes(k));
    if (stale.length) throw new Error(`OpenAPI: described but not routed: ${stale.join(", ")} (src/api/openapi.ts)`);
    const paths: Record<string, Record<string, unknown>> = {};
    for (const key of keys) {
      const [method, path] = key.split(" ") as [string, string];
      const params = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const oaPath = path.replace(/:(\w+)/g, "{$1}");
      const op = OPERATIONS[key]!;
      // Every route that writes may meet a store that takes no writes.
      const writes = method !== "GET" && op.operationId !== "testJob";
      (paths[oaPath] ??= {})[method.toLowerCase()] = operation(writes ? { ...op, errors: [...op.errors, 503] } : op, params);
    }
    paths["/v1/launcher"] = launcherSocket();
    paths["/v1/agent"] = agentSocket();
    cached = {
      version,
      routes: routeKey,
      doc: {
        openapi: "3.1.0",
        info: { title: "ebb", version, description: "Resource manager for elastic parallel jobs", license: { name: "MIT", identifier: "MIT" } },
        components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "the API token, or a job's token" }, clusterKey: { type: "http", scheme: "bearer", description: "the cluster key (agents only)" } }, schemas: { Error: outSchema(ErrorResponse) } },
        security: [{ bearer: [] }],
        paths,
      },
    };
  }
  return { ...cached.doc, servers: [{ url: server, description: "this controller" }] };
}
