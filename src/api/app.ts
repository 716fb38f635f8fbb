/**
 * The HTTP API under /v1: hono routes, bearer-token auth, zod validation of every body and query,
 * and JSON errors ({error:{code,message,field}}) that never carry a stack trace.
 */
import { Hono, type Context } from "hono";
import type { z } from "zod";
import { describeIssues, firstField } from "../util/zod.ts";
import type { ApiBackend } from "./backend.ts";
import { badRequest, errorBody, notFound, Refusal, statusOf } from "./errors.ts";
import { isAdmin, notYourJob, type Scope } from "../domain/scope.ts";
import { openApiDocument } from "./openapi.ts";
import { maskSecrets } from "./secrets.ts";
import { publicDetail } from "./private.ts";
import { CONTENT_TYPE as METRICS_TYPE } from "../util/prometheus.ts";
import { parseJobRef } from "../domain/dependency.ts";
import { DrainRequest, TokenCreate, JobGetQuery, JobListQuery, JobSubmit, JobUpdate, CompleteRequest, PlanListQuery, PriorityQuery, ResizeRequest, SignalRequest, StepCreate, TimelineQuery, UsageQuery } from "./schemas.ts";
import { dashboardPage, streamSlots, STREAM_BACKLOG_MAX, timelineStream } from "./dashboard.ts";
import { jsonPages, slottedJson, unreadSlots } from "./json-stream.ts";
import { JsonTooDeep, parseJson } from "../util/json.ts";
import { UserBytes } from "../domain/user-bytes.ts";
import { UserSlots } from "../domain/user-slots.ts";

type Bodies = { budget: UserBytes; slots: UserSlots; user: string };
type Env = { Variables: { scope: Scope; bodies: Bodies } };

export const MAX_BODY = 2 << 20;

const tooLarge = () => new Refusal("too_large", "too_large", `request body is over ${MAX_BODY} bytes`);

/**
 * Bytes of request bodies one user's requests may hold at once while they are read (every token
 * acting for the user counts). Each body is at most MAX_BODY, but nothing bounded how many one user
 * sends at once: each held connection could hold 2 MiB, up to the controller's descriptors.
 */
export const BODY_BYTES_PER_USER = 16 << 20;

export const bodyBytes = (perUser = BODY_BYTES_PER_USER) =>
  new UserBytes(perUser, (user, held, asked) => new Refusal("too_many", "too_many_bytes", `${user}'s requests hold ${held} bytes of bodies being read; ${asked} more would pass the ${perUser} one user's may hold at once: let some finish and try again`));

/**
 * Requests of one user whose bodies are being read at once. The byte budget alone did not bound
 * them: a body of one byte, or one sent a byte at a time, held a connection (a descriptor) for a
 * byte of the budget, and 300 of them were 300 descriptors held, none answered.
 */
export const BODIES_PER_USER = 64;

const bodySlots = () =>
  new UserSlots(BODIES_PER_USER, (user, n) => new Refusal("too_many", "too_many_bodies", `${user} has ${n} requests whose bodies are being read, the most one user's may (${BODIES_PER_USER}); let some finish and try again`));

/**
 * `GET /v1/jobs/{id}?wait=S` requests one user may hold waiting at once: each holds a connection
 * (a descriptor) up to 50 s, and nothing bounded how many, up to the controller's descriptors.
 */
export const WAITS_PER_USER = 64;

const waitSlots = () =>
  new UserSlots(WAITS_PER_USER, (user, n) => new Refusal("too_many", "too_many_waits", `${user} has ${n} requests waiting for a job to end (?wait=), the most one user may (${WAITS_PER_USER}); let some end and try again`));

/**
 * The body's text, counted while it is read: a body over MAX_BODY is refused as soon as it passes
 * the limit, whether it says its length or comes chunked, so no request can make the controller
 * hold more than MAX_BODY of it; and what `user`'s requests hold together is counted in `budget`.
 */
async function readCapped(req: Request, { budget, slots, user }: Bodies): Promise<string> {
  const release = slots.take(user);
  try {
    return await readCounted(req, budget, user);
  } finally {
    release();
  }
}

async function readCounted(req: Request, budget: UserBytes, user: string): Promise<string> {
  const header = req.headers.get("content-length");
  const length = Number(header ?? 0);
  if (length > MAX_BODY) throw tooLarge();
  if (!req.body) return "";
  // A body that says its length is that many bytes, no more: read whole (a stream reader's turns
  // were ~3% of the controller's CPU per null job's submission).
  if (header !== null && !req.headers.has("transfer-encoding")) {
    budget.take(user, length);
    try {
      return await req.text();
    } finally {
      budget.give(user, length);
    }
  }
  const reader = req.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.byteLength > MAX_BODY) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      try {
        budget.take(user, value.byteLength);
      } catch (e) {
        await reader.cancel().catch(() => {});
        throw e;
      }
      total += value.byteLength;
      parts.push(value);
    }
  } finally {
    budget.give(user, total);
  }
  return Buffer.concat(parts, total).toString("utf8");
}

/** The request's JSON body, validated; with `optional`, no body at all reads as `{}`. */
async function body<S extends z.ZodType>(c: Context, schema: S, optional = false): Promise<z.infer<S>> {
  const text = await readCapped(c.req.raw, c.get("bodies") as Bodies);
  if (optional && text.trim() === "") return validate(schema, {});
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch (e) {
    if (e instanceof JsonTooDeep) throw badRequest(`the body is ${e.message}`);
    throw badRequest("the body is not valid JSON; send Content-Type: application/json with a JSON object");
  }
  return validate(schema, raw);
}

function validate<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const r = schema.safeParse(raw);
  if (!r.success) throw badRequest(describeIssues(r.error), firstField(r.error));
  return r.data;
}

/** A job id in the path: "12", or "12_3" for task 3 of array 12. */
function jobIdParam(c: Context, backend: ApiBackend): number {
  return jobRef(c, backend).id;
}

/** The job a path names, and whether it names one array task (12_3) rather than a job or a whole array (12). */
function jobRef(c: Context, backend: ApiBackend): { id: number; task: boolean } {
  const text = c.req.param("id") ?? "";
  const ref = parseJobRef(text);
  if (!ref || !/^\d+(_\d+)?$/.test(text)) throw badRequest(`job id "${text}" is not a positive integer, or ARRAY_TASK such as 12_3`, "id");
  if (ref.task === undefined) return { id: ref.job, task: false };
  const id = backend.arrayTask(ref.job, ref.task);
  if (id === undefined) throw notFound(`job ${text}`);
  return { id, task: true };
}

const iso = (t: string | undefined) => (t === undefined ? undefined : Date.parse(t));

export function createApi(backend: ApiBackend): Hono<Env> {
  const app = new Hono<Env>();
  const bodies = bodyBytes();
  const bodiesRead = bodySlots();
  const waits = waitSlots();

  app.onError((err, c) => {
    if (err instanceof Refusal) {
      const res = c.json(errorBody(err), statusOf(err));
      // A refused oversized body is not read to its end: close the connection rather than drain it.
      if (err.kind === "too_large") res.headers.set("Connection", "close");
      return res;
    }
    return c.json({ error: { code: "internal", message: err.message } }, 500);
  });
  app.notFound((c) => c.json({ error: { code: "not_found", message: `no route ${c.req.method} ${c.req.path}; see GET /v1/openapi.json` } }, 404));

  dashboardPage(app);

  app.get("/metrics", (c) => {
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (!backend.mayScrape(token)) throw new Refusal("unauthorized", "unauthorized", token === undefined ? "missing Authorization: Bearer <token>: the API token, or the controller's --metrics-token" : "the bearer token may not read the metrics");
    return c.body(backend.metrics(), 200, { "content-type": METRICS_TYPE });
  });

  app.get("/v1/health", (c) => c.json({ ok: true as const, version: backend.version, clusterName: backend.clusterName, ...backend.counts(), store: backend.storage() }));
  // Public, like the health route: Swagger UI and client generators fetch it by its URL alone.
  app.get("/v1/openapi.json", (c) => c.json(openApiDocument(backend.version, app.routes, new URL(c.req.url).origin)));

  app.use("/v1/*", async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) throw new Refusal("unauthorized", "unauthorized", "missing Authorization: Bearer <token>; the token is in the controller's state dir (file 'token') or EBB_TOKEN");
    const scope = backend.authorize(m[1]!);
    if (scope === undefined) throw new Refusal("unauthorized", "unauthorized", "the bearer token is not valid for this controller");
    c.set("scope", scope);
    c.set("bodies", { budget: bodies, slots: bodiesRead, user: backend.userOf(scope) });
    await next();
  });

  const streams = streamSlots();
  const unread = unreadSlots();
  const takeUnread = (c: Context<Env>) => () => unread.take(backend.userOf(c.get("scope")));
  /** An answer that may be long: see slottedJson. */
  const answer = (c: Context<Env>, value: unknown) => slottedJson(c, value, takeUnread(c));
  const requireAll = (c: Context<Env>) => {
    if (!isAdmin(c.get("scope"))) throw new Refusal("forbidden", "forbidden", "only the cluster's API token or an admin's token may do this; a job token acts on its own job and the jobs it submitted, a user token on that user's jobs");
  };
  // The timeline shows every job and node: to everyone unless jobs or nodes are private.
  const requireTimeline = (c: Context<Env>) => {
    if (backend.privateData.has("jobs") || backend.privateData.has("nodes")) requireAll(c);
  };
  const requireJob = (c: Context<Env>, id: number) => {
    const scope = c.get("scope");
    if (!backend.mayActOn(scope, id)) throw notYourJob(scope, id);
  };

  app.post("/v1/jobs", async (c) => {
    const req = await body(c, JobSubmit);
    return c.json(await backend.submit(req, c.get("scope")), 201);
  });

  app.post("/v1/jobs/test", async (c) => {
    const req = await body(c, JobSubmit);
    return c.json(await backend.testOnly(req, c.get("scope")));
  });

  app.get("/v1/jobs", (c) => {
    const q = validate(JobListQuery, c.req.query());
    const filter = { states: q.state, limit: q.limit, since: iso(q.since), until: iso(q.until), name: q.name, user: q.user, partitions: q.partition, arrayJobId: q.array, ids: q.id, before: q.before };
    // The newest `limit` jobs, in id order, streamed; `next` when older ones remain (pass it as `before`).
    const release = takeUnread(c)();
    try {
      const { pages, next } = backend.listJobs(filter, c.get("scope"));
      return jsonPages(c, "jobs", pages, next === undefined ? {} : { next }, release);
    } catch (e) {
      release();
      throw e;
    }
  });

  app.get("/v1/starts", async (c) => answer(c, await backend.starts(c.get("scope"))));

  app.get("/v1/usage", async (c) => {
    const q = validate(UsageQuery, c.req.query());
    const scope = c.get("scope");
    const self = backend.userOf(scope);
    // With private usage, a user sees their own alone.
    if (backend.privateData.has("usage") && !isAdmin(scope)) {
      if (q.user !== undefined && q.user !== self) throw new Refusal("forbidden", "forbidden", `the controller keeps usage private (privateData: usage): this token reads ${self}'s alone`);
      q.user = self;
    }
    return answer(c, await backend.usage({ since: Date.parse(q.since), until: q.until === undefined ? Date.now() : Date.parse(q.until), user: q.user }));
  });

  app.get("/v1/jobs/:id", async (c) => {
    const id = jobIdParam(c, backend);
    const scope = c.get("scope");
    // Another user's job: its public part, unless the controller keeps jobs private.
    const sight = backend.sight(scope, id);
    if (sight === "none") requireJob(c, id);
    const q = validate(JobGetQuery, c.req.query());
    let job;
    if (q.wait === undefined || q.wait === 0) job = await backend.getJob(id, q.wait);
    else {
      // The slot goes back when the wait ends or its client goes.
      const release = waits.take(backend.userOf(scope));
      c.req.raw.signal.addEventListener("abort", release);
      try {
        job = await backend.getJob(id, q.wait * 1000);
      } finally {
        release();
      }
    }
    if (!job) throw notFound(`job ${id}`);
    if (sight === "public") return answer(c, publicDetail(job));
    // A job's token never sees the environment it was submitted with; the cluster's token sees it
    // with the values of names that look secret masked.
    return answer(c, { ...job, env: typeof scope === "number" ? {} : maskSecrets(job.env) });
  });

  app.delete("/v1/jobs/:id", (c) => {
    const { id, task } = jobRef(c, backend);
    requireJob(c, id);
    return c.json({ id, cancelled: true, jobs: backend.cancel(id, task) });
  });

  for (const action of ["hold", "release", "requeue"] as const) {
    app.post(`/v1/jobs/:id/${action}`, (c) => {
      const { id, task } = jobRef(c, backend);
      requireJob(c, id);
      return c.json({ id, jobs: backend[action](id, task) });
    });
  }

  app.post("/v1/jobs/:id/complete", async (c) => {
    const id = jobIdParam(c, backend);
    requireJob(c, id);
    const req = await body(c, CompleteRequest);
    return c.json({ id, jobs: backend.complete(id, req.exitCode) });
  });

  app.patch("/v1/jobs/:id", async (c) => {
    const id = jobIdParam(c, backend);
    requireJob(c, id);
    const req = await body(c, JobUpdate);
    return c.json({ id, changed: backend.update(id, req, c.get("scope")) });
  });

  app.post("/v1/jobs/:id/signal", async (c) => {
    const { id, task } = jobRef(c, backend);
    requireJob(c, id);
    const req = await body(c, SignalRequest);
    return c.json({ id, jobs: backend.signal(id, req, task) });
  });

  app.post("/v1/jobs/:id/resize", async (c) => {
    const id = jobIdParam(c, backend);
    requireJob(c, id);
    const req = await body(c, ResizeRequest);
    return c.json({ id, ...backend.resize(id, req.nodes, c.get("scope")) }, 202);
  });

  app.post("/v1/jobs/:id/steps", async (c) => {
    const id = jobIdParam(c, backend);
    requireJob(c, id);
    const req = await body(c, StepCreate);
    return c.json(await backend.createStep(id, req), 201);
  });

  app.get("/v1/plans", (c) => {
    const q = validate(PlanListQuery, c.req.query());
    if (q.job !== undefined && backend.sight(c.get("scope"), q.job) === "none") requireJob(c, q.job);
    const plans = backend.listPlans({ jobId: q.job, limit: q.limit }, c.get("scope"));
    if (!plans) throw notFound(`job ${q.job}`);
    return answer(c, { plans });
  });

  app.post("/v1/tokens", async (c) => {
    requireAll(c);
    const req = await body(c, TokenCreate);
    return c.json({ user: req.user, admin: req.admin ?? false, token: backend.createToken(req.user, req.admin ?? false) }, 201);
  });

  // Like Slurm's sinfo, sprio and sshare: every token may read them; as Slurm's PrivateData, sprio
  // leaves out other users' jobs when jobs are private, and sshare other users when usage is.
  app.get("/v1/partitions", (c) => answer(c, { partitions: backend.listPartitions() }));
  app.get("/v1/priority", (c) => {
    const all = backend.priorities(validate(PriorityQuery, c.req.query()).job);
    if (!backend.privateData.has("jobs")) return answer(c, all);
    const scope = c.get("scope");
    return answer(c, { ...all, jobs: all.jobs.filter((j) => backend.sight(scope, j.jobId) !== "none") });
  });
  app.get("/v1/shares", (c) => {
    const all = backend.shares();
    const scope = c.get("scope");
    if (!backend.privateData.has("usage") || isAdmin(scope)) return answer(c, all);
    const self = backend.userOf(scope);
    return answer(c, { ...all, users: all.users.filter((u) => u.user === self) });
  });

  app.get("/v1/nodes", (c) => {
    if (backend.privateData.has("nodes")) requireAll(c);
    return answer(c, { nodes: backend.listNodes() });
  });

  app.post("/v1/nodes/:name/drain", async (c) => {
    requireAll(c);
    const name = c.req.param("name");
    // The body is optional (sent chunked or not): none drains with a default reason.
    const req = await body(c, DrainRequest, true);
    const owner = req.owner === true;
    const reason = req.reason ?? (owner ? "its owner wants it back (ebb drain --owner)" : "drained by ebb drain");
    if (!backend.drain(name, reason, owner)) throw notFound(`node ${name}`);
    return c.json({ node: name, drain: reason, ...(owner ? { owner } : {}) });
  });

  app.post("/v1/nodes/:name/resume", (c) => {
    requireAll(c);
    const name = c.req.param("name");
    if (!backend.drain(name, null)) throw notFound(`node ${name}`);
    return c.json({ node: name, drain: null });
  });

  app.get("/v1/timeline", (c) => {
    requireTimeline(c);
    return answer(c, backend.timeline(validate(TimelineQuery, c.req.query()).window));
  });

  app.get("/v1/stream", (c) => {
    requireTimeline(c);
    const { window } = validate(TimelineQuery, c.req.query());
    return timelineStream(c, backend, window, STREAM_BACKLOG_MAX, streams.take(backend.userOf(c.get("scope"))));
  });

  return app;
}
