/**
 * Seeded, bounded fuzzing: 1,000 random bodies per API route and 1,000 random PMI lines. The API
 * answers every one with a 2xx or a 4xx JSON error (never a 5xx); the PMI server never throws and
 * answers or closes. The seed is printed; EBB_FUZZ_SEED replays a run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PmiConnection } from "../../src/pmi/connection.ts";
import { startController, type ControllerHandle } from "../../src/roles/controller/index.ts";
import { mulberry32 } from "../../src/sim/random.ts";
import { SingleNodeJob } from "../support/pmi-job.ts";

const SEED = Number(process.env.EBB_FUZZ_SEED ?? 20261126);
const CASES = 1000;

/** The simulator's seeded generator (mulberry32), with the draws a fuzzer needs. */
function rng(seed: number) {
  const { next } = mulberry32(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}
type Rng = ReturnType<typeof rng>;

const NASTY = ["", " ", "\u0000", "a\u0000b", "\u001b[2J", "\n", "../../etc/passwd", "%j%x%A%a%N%%", "💥", "\ud800", "9".repeat(400), "-1", "1e309", "null", "true", "{}", "[]", "0-20000", "afterok:1", "1-3%0", "PENDING", "2030-01-01T00:00:00Z"];

function randomString(r: Rng): string {
  if (r.next() < 0.5) return r.pick(NASTY);
  const len = r.int(r.next() < 0.9 ? 20 : 5000);
  let s = "";
  for (let i = 0; i < len; i++) s += String.fromCharCode(r.next() < 0.8 ? 32 + r.int(95) : r.int(0x3000));
  return s;
}

function randomValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 2 ? 5 : 7)) {
    case 0:
      return r.pick([0, 1, 2, -1, 1.5, 1e9, -1e18, Number.MAX_SAFE_INTEGER, 100_001, 4097]);
    case 1:
      return randomString(r);
    case 2:
      return r.next() < 0.5;
    case 3:
      return null;
    case 4:
      return r.int(64);
    case 5:
      return Array.from({ length: r.int(6) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(6) }, () => [r.next() < 0.5 ? randomString(r) : `K${r.int(9)}`, randomValue(r, depth + 1)]));
  }
}

/** Percent-encoded, lone surrogates (which URLs cannot carry) replaced. */
const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "\ufffd"));

const FIELDS: Record<string, string[]> = {
  submit: ["name", "argv", "script", "interactive", "nodes", "tasks", "tasksPerNode", "timeLimit", "env", "cwd", "output", "elastic", "minNodes", "maxNodes", "sampleInterval", "elasticSettings", "array", "dependency", "hold", "begin", "exclude", "nodelist", "error", "overcommit", "bogus"],
  resize: ["nodes", "bogus"],
  step: ["argv", "nodes", "tasks", "tasksPerNode", "newNodes", "wait", "overcommit", "cwd", "envDigest", "bogus"],
};

/** A body near the valid ones: a valid start with random fields set to random values; sometimes not JSON at all. */
function randomBody(r: Rng, fields: string[], base: Record<string, unknown>): string {
  const roll = r.next();
  if (roll < 0.1) return randomString(r);
  if (roll < 0.15) return JSON.stringify(randomValue(r));
  const body: Record<string, unknown> = { ...base };
  for (let i = r.int(4); i >= 0; i--) body[r.pick(fields)] = randomValue(r);
  if (r.next() < 0.3) body.hold = true;
  return JSON.stringify(body);
}

let ctl: ControllerHandle;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ebb-fuzz-"));
  process.env.EBB_LOG = "error";
  ctl = await startController({ listen: { host: "127.0.0.1", port: 0 }, stateDir: dir });
});
afterAll(async () => {
  await ctl.stop();
  rmSync(dir, { recursive: true, force: true });
});

test(`API: ${CASES} random bodies per route, 0 5xx (seed ${SEED})`, async () => {
  const r = rng(SEED);
  const call = async (method: string, path: string, body?: string) => {
    const res = await fetch(`${ctl.url}${path}`, { method, headers: { Authorization: `Bearer ${ctl.token}`, "Content-Type": "application/json" }, body });
    const text = await res.text();
    return { status: res.status, text };
  };
  const held = JSON.parse((await call("POST", "/v1/jobs", JSON.stringify({ argv: ["true"], hold: true }))).text).id as number;
  const routes: Array<[string, () => [string, string, string | undefined]]> = [
    ["POST /v1/jobs", () => ["POST", "/v1/jobs", randomBody(r, FIELDS.submit!, { argv: ["true"] })]],
    ["POST /v1/jobs/test", () => ["POST", "/v1/jobs/test", randomBody(r, FIELDS.submit!, { argv: ["true"] })]],
    ["POST /v1/jobs/:id/resize", () => ["POST", `/v1/jobs/${held}/resize`, randomBody(r, FIELDS.resize!, { nodes: 1 })]],
    ["POST /v1/jobs/:id/steps", () => ["POST", `/v1/jobs/${held}/steps`, randomBody(r, FIELDS.step!, { argv: ["true"] })]],
    ["GET /v1/jobs?query", () => ["GET", `/v1/jobs?${r.pick(["state", "limit", "since", "until", "name", "user", "array", "bogus"])}=${enc(randomString(r))}`, undefined]],
    ["GET|DELETE|hold|release /v1/jobs/:id", () => {
      const id = r.next() < 0.5 ? enc(randomString(r)) : String(r.pick([held, 0, -1, 999999, "1_2", "1_x", "00"]));
      const [method, suffix] = r.pick([["GET", ""], ["GET", `?wait=${r.pick(["0", "-1", "x", "51"])}`], ["DELETE", ""], ["POST", "/hold"], ["POST", "/release"]] as const);
      return [method, `/v1/jobs/${id}${suffix}`, undefined];
    }],
  ];
  const counts: string[] = [];
  for (const [name, make] of routes) {
    const statuses = new Map<number, number>();
    for (let i = 0; i < CASES; i++) {
      const [method, path, body] = make();
      const res = await call(method, path, body);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) throw new Error(`${name}: ${res.status} for ${method} ${path} ${body?.slice(0, 300)}: ${res.text.slice(0, 300)}`);
      expect(() => JSON.parse(res.text)).not.toThrow();
    }
    counts.push(`${name}: ${[...statuses].sort().map(([s, n]) => `${s}x${n}`).join(" ")}`);
  }
  console.log(`seed ${SEED}\n${counts.join("\n")}`);
  expect((await call("GET", "/v1/health")).status).toBe(200);
}, 300_000);

test(`PMI: ${CASES} random lines, every one answered or the connection closed, nothing thrown (seed ${SEED})`, () => {
  const r = rng(SEED + 1);
  const CMDS = ["init", "get_maxes", "get_appnum", "get_my_kvsname", "barrier_in", "put", "get", "finalize", "abort", "initack", "spawn", "publish_name", "lookup_name", "get_universe_size", "fullinit", "job-getid", "kvs-put", "kvs-get", "kvs-fence", "info-getjobattr", "bogus"];
  let replies = 0;
  let closes = 0;
  const open = () => {
    const job = new SingleNodeJob(2);
    return new PmiConnection({ write: () => void replies++, close: () => void closes++ }, { backend: job.backend(r.int(2)) });
  };
  let conn = open();
  for (let i = 0; i < CASES; i++) {
    if (!conn.isOpen) conn = open();
    if (r.next() < 0.3) conn.feed("cmd=init pmi_version=1 pmi_subversion=1\n");
    const roll = r.next();
    let line: string;
    if (roll < 0.6) {
      const args = Array.from({ length: r.int(4) }, () => `${r.pick(["kvsname", "key", "value", "pmi_version", "pmi_subversion", "pmiid", "service", "port", "thrid", randomString(r)])}=${randomString(r)}`);
      line = `cmd=${r.pick(CMDS)} ${args.join(" ")}\n`;
    } else if (roll < 0.8) line = `${randomString(r)}\n`;
    else {
      const payload = `cmd=${r.pick(CMDS)};${randomString(r)};`;
      line = `cmd=init pmi_version=2 pmi_subversion=0\n${String(r.next() < 0.8 ? payload.length : r.int(999999)).padStart(6, "0")}${payload}`;
    }
    expect(() => conn.feed(line)).not.toThrow();
  }
  console.log(`PMI: ${CASES} random lines, ${replies} replies, ${closes} connections closed`);
  expect(replies + closes).toBeGreaterThan(0);
});
