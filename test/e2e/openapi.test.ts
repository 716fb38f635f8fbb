/**
 * The OpenAPI document generated from the routes: valid for a real OpenAPI validator
 * (@seriousme/openapi-schema-validator), and every answer of every route — successes and each
 * error status — is one the document lists, with a body its schema accepts (ajv, JSON Schema 2020-12).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { jobToken } from "../../src/proto/credential.ts";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";
import { sseEvents } from "../support/sse.ts";

let c: TestCluster;
let doc: any;
let resolved: any;
const ajv = new Ajv2020({ strict: false, allErrors: true });
const seen = new Set<string>();

beforeAll(async () => {
  // Nodes and usage private (Slurm's PrivateData), so that their routes answer the 403 they list too;
  // partitions, so that a submission can be refused for one (403) and for MaxSubmitJobs (409).
  const config = join(mkdtempSync(join(tmpdir(), "ebb-openapi-")), "controller.json");
  writeFileSync(config, JSON.stringify({ privateData: ["nodes", "usage"], partitions: [{ name: "all", nodes: "ALL", default: true }, { name: "closed", nodes: "ALL", allowUsers: ["ebbt_nobody"] }, { name: "full", nodes: "ALL", limits: { maxSubmitJobs: 0 } }] }));
  c = await startCluster({ agents: 2, controllerArgs: ["--config", config] });
  doc = (await c.api("GET", "/v1/openapi.json")).json;
  const v = new Validator();
  const res = await v.validate(structuredClone(doc));
  if (!res.valid) throw new Error(`the OpenAPI document is not valid: ${JSON.stringify(res.errors, null, 1).slice(0, 4000)}`);
  resolved = v.resolveRefs();
});
afterAll(async () => {
  await c?.stop();
});

/** The operation of a concrete path: /v1/jobs/12/hold -> /v1/jobs/{id}/hold. */
function operationOf(method: string, path: string): { key: string; op: any } {
  const bare = path.split("?")[0]!;
  for (const [template, item] of Object.entries<any>(resolved.paths)) {
    const re = new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`);
    if (re.test(bare) && item[method.toLowerCase()]) return { key: `${method} ${template}`, op: item[method.toLowerCase()] };
  }
  throw new Error(`${method} ${bare} is not in the document`);
}

/** One live call, checked against the document: the status is listed and the body fits its schema. */
async function call(method: string, path: string, opts: { body?: unknown; raw?: string; token?: string | null; expect: number }) {
  const token = opts.token === undefined ? c.token : opts.token;
  const res = await fetch(`${c.url}${path}`, {
    method,
    redirect: "manual",
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(opts.body !== undefined || opts.raw ? { "Content-Type": "application/json" } : {}) },
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const { key, op } = operationOf(method, path);
  const text = res.headers.get("content-type")?.startsWith("text/event-stream") ? "" : await res.text();
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) await res.body?.cancel();
  expect({ key, status: res.status, text: res.status === opts.expect ? "" : text.slice(0, 300) }).toEqual({ key, status: opts.expect, text: "" });
  const documented = op.responses[String(res.status)];
  expect({ key, status: res.status, documented: documented !== undefined }).toEqual({ key, status: res.status, documented: true });
  const type = res.headers.get("content-type") ?? "";
  const content = documented.content ?? {};
  if (type.startsWith("application/json")) {
    const schema = content["application/json"]?.schema;
    expect({ key, status: res.status, schema: schema !== undefined }).toEqual({ key, status: res.status, schema: true });
    const validate = ajv.compile(schema);
    const body = JSON.parse(text);
    const ok = validate(body);
    expect({ key, status: res.status, errors: ok ? null : validate.errors }).toEqual({ key, status: res.status, errors: null });
  } else if (Object.keys(content).length > 0) {
    expect(Object.keys(content).some((m) => type.startsWith(m))).toBe(true);
  }
  seen.add(`${key} ${res.status}`);
  return text && type.startsWith("application/json") ? JSON.parse(text) : text;
}

describe("the OpenAPI document", () => {
  test("is valid OpenAPI 3.1 with operationIds, servers, a license, errors in one schema and both WebSockets (launcher, agent)", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: c.url, description: "this controller" }]);
    expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" });
    const ids: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item)) {
        expect({ path, method, id: typeof op.operationId }).toEqual({ path, method, id: "string" });
        ids.push(op.operationId);
        for (const [status, r] of Object.entries<any>(op.responses))
          if (Number(status) >= 400 && r.content?.["application/json"]) expect(r.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
      }
    expect(new Set(ids).size).toBe(ids.length);
    const ws = doc.paths["/v1/launcher"].get;
    expect(Object.keys(ws.responses)).toEqual(["101", "401", "426"]);
    expect(ws["x-websocket"].messages.fromClient).toContain("step.create");
    expect(ws["x-websocket"].messages.fromServer).toContain("realloc");
    const agent = doc.paths["/v1/agent"].get;
    expect(Object.keys(agent.responses)).toEqual(["101", "401", "426"]);
    expect(agent.security).toEqual([{ clusterKey: [] }]);
    expect(agent["x-websocket"].messages.fromClient).toContain("hello");
    expect(agent["x-websocket"].messages.fromClient).toContain("heartbeat");
    expect(agent["x-websocket"].messages.fromServer).toContain("job.start");
  });

  test("every route answers what the document says, for each status it lists", async () => {
    const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
    // Pages and metrics.
    expect(await call("GET", "/", { token: null, expect: 200 })).toContain("<form id=\"login\"");
    await call("GET", "/ui", { token: null, expect: 301 });
    await call("GET", "/metrics", { expect: 200 });
    await call("GET", "/metrics", { token: null, expect: 401 });
    await call("GET", "/v1/health", { token: null, expect: 200 });
    await call("GET", "/v1/openapi.json", { expect: 200 });
    // Public, like the health route: Swagger UI and generators fetch it by its URL alone.
    await call("GET", "/v1/openapi.json", { token: null, expect: 200 });
    await call("GET", "/v1/openapi.json", { token: "not-a-token", expect: 200 });

    // Submitting.
    const big = JSON.stringify({ argv: ["true"], env: { X: "x".repeat(3 << 20) } });
    for (const path of ["/v1/jobs", "/v1/jobs/test"]) {
      await call("POST", path, { body: { argv: ["true"], nodes: 0 }, expect: 400 });
      await call("POST", path, { body: { argv: ["true"] }, token: null, expect: 401 });
      await call("POST", path, { raw: big, expect: 413 });
    }
    await call("POST", "/v1/jobs/test", { body: { argv: ["true"] }, expect: 200 });
    for (const path of ["/v1/jobs", "/v1/jobs/test"]) {
      await call("POST", path, { body: { argv: ["true"], partition: "closed" }, expect: 403 });
      await call("POST", path, { body: { argv: ["true"], partition: "full" }, expect: 409 });
    }
    for (const path of ["/v1/partitions", "/v1/priority", "/v1/shares"]) {
      await call("GET", path, { expect: 200 });
      await call("GET", path, { token: null, expect: 401 });
    }
    const done = (await call("POST", "/v1/jobs", { body: { argv: ["true"], cwd: c.dir }, expect: 201 })).id as number;
    await c.waitJob(done, ["COMPLETED"]);
    const held = (await call("POST", "/v1/jobs", { body: { argv: ["true"], cwd: c.dir, hold: true }, expect: 201 })).id as number;
    const sleeper = await c.submit({ argv: ["sleep", "600"] });
    await c.waitJob(sleeper, ["RUNNING"]);
    const other = jobToken(key, sleeper);

    // Listing and reading.
    await call("GET", "/v1/jobs?state=RUNNING,COMPLETED", { expect: 200 });
    await call("GET", "/v1/jobs?state=SOMETIMES", { expect: 400 });
    await call("GET", "/v1/jobs", { token: null, expect: 401 });
    await call("GET", `/v1/jobs/${done}`, { expect: 200 });
    await call("GET", `/v1/jobs/${done}?wait=0`, { expect: 200 });
    // The scheduler's plans: the start of `done` is an item of one of them.
    const plans = (await call("GET", `/v1/plans?job=${done}`, { expect: 200 })).plans;
    expect(plans[0].items[0]).toMatchObject({ jobId: done, kind: "start", status: "done" });
    await call("GET", "/v1/plans?limit=5", { expect: 200 });
    await call("GET", `/v1/plans?job=${sleeper}`, { token: other, expect: 200 });
    await call("GET", "/v1/plans?limit=0", { expect: 400 });
    await call("GET", "/v1/plans", { token: null, expect: 401 });
    // Every job's items are public, unless jobs are private; a job's token asking of no job is refused.
    await call("GET", `/v1/plans?job=${done}`, { token: other, expect: 200 });
    await call("GET", "/v1/plans?job=999999", { token: other, expect: 403 });
    await call("GET", "/v1/plans?job=999999", { expect: 404 });
    for (const [method, suffix] of [["GET", ""], ["DELETE", ""], ["POST", "/hold"], ["POST", "/release"], ["POST", "/resize"], ["POST", "/steps"], ["POST", "/signal"], ["POST", "/requeue"], ["POST", "/complete"], ["PATCH", ""]] as const) {
      const body = suffix === "/resize" ? { nodes: 1 } : suffix === "/steps" ? { argv: ["true"], cwd: "/", envDigest: "0".repeat(64) } : suffix === "/signal" ? { signal: "SIGUSR1" } : suffix === "/complete" ? { exitCode: 0 } : method === "PATCH" ? { name: "x" } : undefined;
      await call(method, `/v1/jobs/abc${suffix}`, { body, expect: 400 });
      await call(method, `/v1/jobs/999999${suffix}`, { body, expect: 404 });
      await call(method, `/v1/jobs/${done}${suffix}`, { body, token: null, expect: 401 });
      // Another's job: shown without its private part, not acted on.
      const answer = await call(method, `/v1/jobs/${done}${suffix}`, { body, token: other, expect: method === "GET" ? 200 : 403 });
      if (method === "GET") expect(answer).toMatchObject({ id: done, private: true, argv: null, env: {} });
    }
    await call("GET", "/v1/jobs/999999", { token: other, expect: 403 });
    // Expected starts; usage over a window (private here: a job's token reads its user's alone).
    await call("GET", "/v1/starts", { expect: 200 });
    await call("GET", "/v1/starts", { token: null, expect: 401 });
    const since = new Date(Date.now() - 3_600_000).toISOString();
    await call("GET", `/v1/usage?since=${since}`, { expect: 200 });
    await call("GET", `/v1/usage?since=${since}`, { token: other, expect: 200 });
    await call("GET", `/v1/usage?since=${since}&user=someone`, { token: other, expect: 403 });
    await call("GET", "/v1/usage", { expect: 400 });
    await call("GET", `/v1/usage?since=${since}&until=${since}`, { expect: 400 });
    await call("GET", `/v1/usage?since=${since}`, { token: null, expect: 401 });

    // Holding, releasing, cancelling.
    await call("POST", `/v1/jobs/${held}/hold`, { expect: 200 });
    await call("POST", `/v1/jobs/${done}/hold`, { expect: 409 });
    await call("POST", `/v1/jobs/${done}/release`, { expect: 409 });
    await call("DELETE", `/v1/jobs/${done}`, { expect: 409 });

    // Steps: in a running job, not in a pending one; a bad or too big body.
    const step = { argv: ["true"], cwd: "/", envDigest: "0".repeat(64) };
    await call("POST", `/v1/jobs/${sleeper}/steps`, { body: step, expect: 201 });
    await call("POST", `/v1/jobs/${sleeper}/steps`, { body: { argv: [] }, expect: 400 });
    await call("POST", `/v1/jobs/${sleeper}/steps`, { raw: big, expect: 413 });
    await call("POST", `/v1/jobs/${held}/steps`, { body: step, expect: 409 });

    // Signalling (scancel --signal): a running job's steps, not an ended job; a signal ebb does not send, a too big body.
    await call("POST", `/v1/jobs/${sleeper}/signal`, { body: { signal: "SIGCONT", to: "full" }, expect: 200 });
    await call("POST", `/v1/jobs/${done}/signal`, { body: { signal: "SIGUSR1" }, expect: 409 });
    await call("POST", `/v1/jobs/${sleeper}/signal`, { body: { signal: "SIGFOO" }, expect: 400 });
    await call("POST", `/v1/jobs/${sleeper}/signal`, { raw: big, expect: 413 });

    // Updating (scontrol update): a pending job's name; an ended job refused; nothing to change, a too big body.
    await call("PATCH", `/v1/jobs/${held}`, { body: { name: "renamed", timeLimit: "5:00" }, expect: 200 });
    await call("PATCH", `/v1/jobs/${done}`, { body: { name: "x" }, expect: 409 });
    await call("PATCH", `/v1/jobs/${held}`, { body: {}, expect: 400 });
    await call("PATCH", `/v1/jobs/${held}`, { raw: big, expect: 413 });

    // Requeueing (scontrol requeue): a running batch job starts again; a command job or an ended one is refused.
    const batch = await c.submit({ script: "#!/bin/sh\nsleep 600\n", cwd: c.dir, output: "/dev/null" });
    await c.waitJob(batch, ["RUNNING"]);
    await call("POST", `/v1/jobs/${batch}/requeue`, { expect: 200 });
    await call("POST", `/v1/jobs/${sleeper}/requeue`, { expect: 409 });
    await call("POST", `/v1/jobs/${done}/requeue`, { expect: 409 });
    await call("DELETE", `/v1/jobs/${batch}`, { expect: 200 });

    // Completing (salloc's end): a running batch job ends with the exit code; an ended one refused; a code beyond 255, a too big body.
    const holder = await c.submit({ script: "#!/bin/sh\nsleep 600\n", cwd: c.dir, output: "/dev/null" });
    await c.waitJob(holder, ["RUNNING"]);
    await call("POST", `/v1/jobs/${holder}/complete`, { body: { exitCode: 300 }, expect: 400 });
    await call("POST", `/v1/jobs/${holder}/complete`, { raw: big, expect: 413 });
    await call("POST", `/v1/jobs/${holder}/complete`, { body: { exitCode: 3 }, expect: 200 });
    expect(await c.waitJob(holder, ["FAILED"])).toMatchObject({ state: "FAILED", exitCode: 3 });
    await call("POST", `/v1/jobs/${done}/complete`, { body: { exitCode: 0 }, expect: 409 });

    // Resizing: not elastic (409), a bad or too big body, then a real elastic job grown.
    await call("POST", `/v1/jobs/${sleeper}/resize`, { body: { nodes: 2 }, expect: 409 });
    await call("POST", `/v1/jobs/${sleeper}/resize`, { body: { nodes: "two" }, expect: 400 });
    await call("POST", `/v1/jobs/${sleeper}/resize`, { raw: big, expect: 413 });
    await call("DELETE", `/v1/jobs/${sleeper}`, { expect: 200 });
    await call("POST", `/v1/jobs/${held}/release`, { expect: 200 });
    await c.waitJob(held, ["COMPLETED"]);
    await c.waitNodes(2, "IDLE");
    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", process.execPath, COUNTER, "1000000", "20"], /pid=\d+ rank=0/);
    const grow = await call("POST", `/v1/jobs/${job.id}/resize`, { body: { nodes: 2 }, expect: 202 });
    await c.adaptationEnd(job.id, grow.adaptationId);

    // Nodes, the timeline and its stream: admins only, since this controller keeps nodes private.
    for (const path of ["/v1/nodes", "/v1/timeline", "/v1/stream"]) {
      await call("GET", path, { expect: 200 });
      await call("GET", path, { token: null, expect: 401 });
      await call("GET", path, { token: jobToken(key, job.id), expect: 403 });
    }
    for (const path of ["/v1/timeline?window=5", "/v1/stream?window=x"]) await call("GET", path, { expect: 400 });
    // One user's streams held open up to the most one user may have: the next is a 429.
    const streams = await Promise.all(Array.from({ length: 8 }, () => fetch(`${c.url}/v1/stream`, { headers: { Authorization: `Bearer ${c.token}` } })));
    await call("GET", "/v1/stream", { expect: 429 });
    for (const r of streams) await r.body?.cancel();
    // Users' tokens: the API token (or an admin's) only.
    const issued = await call("POST", "/v1/tokens", { body: { user: "openapi" }, expect: 201 });
    await call("POST", "/v1/tokens", { body: { user: "Not A Name" }, expect: 400 });
    await call("POST", "/v1/tokens", { raw: big, expect: 413 });
    await call("POST", "/v1/tokens", { body: { user: "x" }, token: null, expect: 401 });
    await call("POST", "/v1/tokens", { body: { user: "x" }, token: issued.token, expect: 403 });
    // Draining and resuming a node: the API token only.
    await call("POST", "/v1/nodes/node02/drain", { body: { reason: "openapi" }, expect: 200 });
    await call("POST", "/v1/nodes/node02/drain", { expect: 200 });
    await call("POST", "/v1/nodes/node02/drain", { body: { reason: "" }, expect: 400 });
    await call("POST", "/v1/nodes/node02/drain", { raw: big, expect: 413 });
    await call("POST", "/v1/nodes/node99/drain", { expect: 404 });
    await call("POST", "/v1/nodes/node99/resume", { expect: 404 });
    for (const action of ["drain", "resume"]) {
      await call("POST", `/v1/nodes/node02/${action}`, { token: null, expect: 401 });
      await call("POST", `/v1/nodes/node02/${action}`, { token: jobToken(key, job.id), expect: 403 });
    }
    await call("POST", "/v1/nodes/node02/resume", { expect: 200 });
    await call("GET", "/v1/timeline?window=86400", { expect: 200 });
    await call("DELETE", `/v1/jobs/${job.id}`, { expect: 200 });
    await job.finished;

    // Every status the document lists for a route was answered live.
    const listed: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      if (path === "/v1/launcher" || path === "/v1/agent") continue; // the WebSockets: their own tests below
      // 503 (a store that takes no writes) needs a full disk: disk-full.test.ts answers it on every route.
      for (const [method, op] of Object.entries<any>(item)) for (const status of Object.keys(op.responses)) if (status !== "503") listed.push(`${method.toUpperCase()} ${path} ${status}`);
    }
    expect(listed.filter((l) => !seen.has(l))).toEqual([]);
  }, 180_000);

  test("the stream's events fit the schemas of x-events (the whole timeline, then a delta)", async () => {
    const events = resolved.paths["/v1/stream"].get["x-events"];
    expect(Object.keys(events)).toEqual(["timeline", "delta"]);
    const res = await fetch(`${c.url}/v1/stream`, { headers: { Authorization: `Bearer ${c.token}` } });
    const stream = sseEvents(res.body!);
    const next = async () => {
      const e = await stream.next();
      return { event: e.event, data: JSON.parse(e.data) as unknown };
    };
    const check = (e: { event: string; data: unknown }) => {
      const validate = ajv.compile(events[e.event]);
      expect({ event: e.event, errors: validate(e.data) ? null : validate.errors }).toEqual({ event: e.event, errors: null });
    };
    const first = await next();
    expect(first.event).toBe("timeline");
    check(first);
    await c.submit({ argv: ["true"], output: "/dev/null" });
    const delta = await next();
    expect(delta.event).toBe("delta");
    check(delta);
    await stream.cancel();
  });

  test("the launcher WebSocket answers 401 and 426 as described", async () => {
    expect((await fetch(`${c.url}/v1/launcher`)).status).toBe(401);
    const r = await fetch(`${c.url}/v1/launcher`, { headers: { Authorization: `Bearer ${c.token}` } });
    expect(r.status).toBe(426);
    expect((await r.json()).error.code).toBe("upgrade_required");
  });

  test("the agent WebSocket answers 401, 426 and 101 as described; a wrong key is closed with its refusal code", async () => {
    const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
    const agent = resolved.paths["/v1/agent"].get;
    // Without an upgrade: 401 for a wrong key (the API token is not the key), 426 with the key; both with the Error body.
    for (const [token, status] of [[c.token, 401], [undefined, 401], [key, 426]] as const) {
      const r = await fetch(`${c.url}/v1/agent`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
      expect({ token: token === key ? "key" : String(token === c.token), status: r.status }).toEqual({ token: token === key ? "key" : String(token === c.token), status });
      expect(agent.responses[String(r.status)]).toBeDefined();
      const body = await r.json();
      expect(ajv.compile(agent.responses[String(r.status)].content["application/json"].schema)(body)).toBe(true);
      if (r.status === 426) expect(body.error.message).toContain("WebSocket");
    }
    // Upgraded: the key opens it (101); the API token is refused with the documented code.
    const connect = (token: string) =>
      new Promise<{ opened: boolean; code: number }>((resolve) => {
        const ws = new WebSocket(`${c.url.replace("http", "ws")}/v1/agent`, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
        let opened = false;
        ws.onopen = () => {
          opened = true;
          if (token === key) ws.close(1000);
        };
        ws.onclose = (e) => resolve({ opened, code: e.code });
      });
    expect(await connect(key)).toEqual({ opened: true, code: 1000 });
    expect(await connect(c.token)).toEqual({ opened: true, code: agent["x-websocket"].refusals.badKey });
    expect(agent["x-websocket"].refusals.badKey).toBe(4401);
  });
});
