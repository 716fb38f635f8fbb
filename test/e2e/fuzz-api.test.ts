/**
 * Seeded fuzzing of every API route under two real users. The routes come from the controller's
 * own OpenAPI document: a route with no generator here fails the test. Each gets 1,000 requests,
 * half from ebbt_alice and half from ebbt_bob (system users made with useradd, each with a user
 * token; a share of each one's requests carry a job token of theirs, a token of a job that does not
 * exist, a bad token or the cluster's token), the two users' requests interleaving. Bodies, queries
 * and path parameters are built from the route's schemas with hostile values (test/support/hostile.ts):
 * the other user's job ids, ids of no job, paths that climb into the other's directory and /root.
 *
 * Held: no 5xx; every error is JSON {error:{code,message}}; nothing answered 2xx changes a job the
 * caller may not act on (a user: their jobs; a job token: its job and the jobs it submitted), and
 * the routes that read show another's jobs only without their private part; no answer to a user
 * (or a job of theirs) holds the other user's secret, which is in their jobs' environment, command,
 * directory, output path, script and output; each user's prepared jobs are as they were; no job
 * wrote where its user may not; the controller answers between routes, and each user's running
 * `sleep` still runs at the end. A second test asks every route and the launcher's WebSocket,
 * as one user and a job of theirs, about each of the other's jobs: the secret is in none of it.
 * Submissions run nothing but `true` (or a program that does not exist), most of them held.
 * The seed is printed; EBB_FUZZ_SEED replays a run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_ARRAY_TASKS } from "../../src/domain/array.ts";
import { MAX_BODY } from "../../src/api/app.ts";
import { jobToken } from "../../src/proto/credential.ts";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { deepJson, generate, hostileJson, NASTY, PRINTABLE, randomString, randomValue, rng, type Hint, type JsonSchema, type Rng } from "../support/hostile.ts";
import { ensureUser } from "../support/users.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";
import { VERSION } from "../../src/util/version.ts";

const SEED = Number(process.env.EBB_FUZZ_SEED ?? 20261126);
const CASES = 1000;
const USERS = ["ebbt_alice", "ebbt_bob"] as const;
type User = (typeof USERS)[number];
const NODES = ["node01", "node02", "node03"];
const ENDED = ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"];

/** Who sends a request: a user's token, a job's token (acts for its job and the jobs it submitted), the cluster's, or none valid. */
type Actor = { kind: "user"; user: User; token: string } | { kind: "job"; user: User; job: number; token: string } | { kind: "admin"; token: string } | { kind: "invalid"; token: string | undefined };

interface Side {
  user: User;
  other: User;
  dir: string;
  uid: number;
  token: string;
  /** Its `sleep`, RUNNING on a node of its own for the whole test; only read, stepped and resized by its user. */
  running: number;
  /** Jobs the user's own requests never change: what the other user must not change either. */
  kept: { held: number; array: number; done: number; script: number };
  /** In each kept job's environment, command, directory, output path, script and output: no answer to the other user may hold it. */
  secret: string;
  /** The kept jobs with the array's tasks, and the running sleep. */
  keptIds: number[];
  /** The job whose token the user also sends; it and the jobs it submits are fair game. */
  parent: number;
  /** The user's other jobs: held at the start, then whatever its submissions made. */
  own: number[];
}

let c: TestCluster;
let base: string;
let clusterKey: string;
const sides = {} as Record<User, Side>;
/** Files no job may write: the users' canaries, a name in /root, /etc/passwd. */
const ROOT_PROBE = `/root/.ebb-fuzz-probe-${process.pid}`;
let passwd: string;


async function submit(token: string, body: Record<string, unknown>): Promise<number> {
  const r = await c.api("POST", "/v1/jobs", { argv: ["true"], output: "/dev/null", ...body }, token);
  if (r.status !== 201) throw new Error(`submit: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.id;
}

beforeAll(async () => {
  expect(process.getuid!()).toBe(0); // the agents run jobs as their users
  process.env.EBB_LOG = "error";
  base = mkdtempSync(join(tmpdir(), "ebb-fuzz-"));
  Bun.spawnSync(["chmod", "755", base]);
  passwd = readFileSync("/etc/passwd", "utf8");
  c = await startCluster({ agents: NODES.length });
  clusterKey = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  for (const [i, user] of USERS.entries()) {
    const uid = ensureUser(user);
    const dir = join(base, user);
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "canary"), `${user}\n`);
    chownSync(dir, uid, uid);
    chownSync(join(dir, "canary"), uid, uid);
    const t = await c.api("POST", "/v1/tokens", { user });
    expect(t.status).toBe(201);
    const token = t.json.token as string;
    // The user's secret, in every private part of the kept jobs: a directory, an environment, a command, an output path and what the job wrote.
    const secret = `EBBSECRET${randomBytes(8).toString("hex")}`;
    const private_ = join(dir, secret);
    mkdirSync(private_, { mode: 0o700 });
    chownSync(private_, uid, uid);
    const mine = { cwd: private_, env: { EBB_FUZZ_SECRET: secret } };
    const done = await submit(token, { ...mine, argv: ["sh", "-c", "echo $EBB_FUZZ_SECRET", secret], output: join(private_, `${secret}.out`) });
    expect((await c.waitJob(done, ENDED)).state).toBe("COMPLETED");
    expect(readFileSync(join(private_, `${secret}.out`), "utf8")).toBe(`${secret}\n`);
    // Each user's sleep gets a node of its own (nodes are not shared); the last node runs what the fuzzing submits.
    const running = await submit(token, { ...mine, argv: ["sh", "-c", "sleep 600", secret], nodelist: [NODES[i]!], output: join(private_, "sleep.out") });
    expect((await c.waitJob(running, ["RUNNING", ...ENDED])).state).toBe("RUNNING");
    const kept = {
      held: await submit(token, { ...mine, argv: ["true", secret], hold: true, error: join(private_, "err-%j") }),
      array: await submit(token, { ...mine, argv: ["true", secret], hold: true, array: "0-3" }),
      done,
      script: await submit(token, { ...mine, argv: undefined, script: `#!/bin/sh\n# ${secret}\ntrue\n`, hold: true }),
    };
    const parent = await submit(token, { cwd: dir, hold: true });
    const own = [parent, await submit(token, { cwd: dir, hold: true }), await submit(token, { cwd: dir, hold: true, array: "0-2" })];
    const tasks = (await c.api("GET", `/v1/jobs?array=${kept.array}`)).json.jobs.map((j: any) => j.id as number);
    const keptIds = [running, kept.held, kept.done, kept.script, ...tasks];
    sides[user] = { user, other: USERS[1 - i]!, dir, uid, token, running, kept, secret, keptIds, parent, own };
  }
}, 180_000);

afterAll(async () => {
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
  rmSync(ROOT_PROBE, { force: true });
});

// ---- what the requests are made of --------------------------------------------------------------

const GHOST_JOB = 9_999_999;
const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "\ufffd"));

function actorFor(r: Rng, side: Side, adminShare: number): Actor {
  const roll = r.next();
  if (roll < adminShare) return { kind: "admin", token: c.token };
  if (roll < adminShare + 0.12) return { kind: "job", user: side.user, job: side.parent, token: jobToken(clusterKey, side.parent) };
  if (roll < adminShare + 0.17) {
    const token = r.pick([undefined, "", "x", `ebbu_${randomString(r)}`, `job.${side.parent}.${"0".repeat(64)}`, jobToken(clusterKey, GHOST_JOB), `${side.token}x`]);
    return { kind: "invalid", token: token?.replace(/[^\x21-\x7e ]/g, "") };
  }
  return { kind: "user", user: side.user, token: side.token };
}

/**
 * A job id for a path: the caller's, the other user's, none, an array task or not an id at all;
 * never one of the caller's kept jobs (a random string can be "7"): only the other user's requests reach those.
 */
function jobId(r: Rng, side: Side, mayEnd: boolean): string {
  for (;;) {
    const id = anyJobId(r, side, mayEnd);
    if (!namesKept(side, id, mayEnd)) return id;
  }
}

function namesKept(side: Side, id: string, mayEnd: boolean): boolean {
  let text: string;
  try {
    text = decodeURIComponent(id);
  } catch {
    return false;
  }
  const [job, task] = text.split("_").map(Number);
  if (task !== undefined) return job === side.kept.array;
  return side.keptIds.includes(job!) && (mayEnd || job !== side.running);
}

function anyJobId(r: Rng, side: Side, mayEnd: boolean): string {
  const other = sides[side.other];
  const roll = r.next();
  if (roll < 0.35) return String(r.pick(mayEnd ? side.own : [...side.own, side.running]));
  if (roll < 0.65) return String(r.pick([other.running, other.kept.held, other.kept.array, other.kept.done, other.kept.script, other.parent, ...other.own.slice(0, 20)]));
  if (roll < 0.75) return r.pick([`${other.kept.array}_${r.int(5)}`, `${side.own[2]}_${r.int(4)}`, `${other.kept.array}_99999999999999999999`]);
  if (roll < 0.85) return String(r.pick([GHOST_JOB, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 0]));
  return r.chance(0.5) ? enc(randomString(r)) : r.pick(["-1", "01", "1e3", "0x1", "1_2_3", "1_", "_1", "%2e%2e", "..%2f..%2fetc%2fpasswd", "%00", "%", "%zz", " 1", "1.0"]);
}

function nodeName(r: Rng): string {
  return r.chance(0.3) ? r.pick(NODES) : r.chance(0.5) ? enc(randomString(r)) : r.pick(["node99", "NODE01", "..", "%2e%2e", "node01%00", "node01%20", "a".repeat(65), "%"]);
}

/** What a schema cannot say: which strings are paths, job ids, node names, environment names. */
function hints(side: Side): Record<string, Hint> {
  const mine = join(base, side.user);
  const theirs = join(base, side.other);
  const other = sides[side.other];
  // Paths that climb out of the user's directory: into the other user's, /root, /etc, /proc.
  const paths = ["../../etc/passwd", "/etc/passwd", join(theirs, "canary"), `../${side.other}/canary`, join(theirs, "new-%j"), ROOT_PROBE, "/root", "/", "/dev/null", "%x%j%%/../../x", "out-%j-%a", "/proc/self/mem", mine, `${theirs}/`, "%", "%%%", "💥/%u"];
  const badPaths = ["a\u0000b", `/tmp/${"a".repeat(4097)}`, "", "\n"];
  const ids = () => [other.running, other.kept.held, other.kept.array, GHOST_JOB, side.parent];
  const nodes = (r: Rng, tame: boolean) => (tame ? r.pick([...NODES, "node99", "a".repeat(64), "x.y_z-1"]) : r.pick(["NODE01 ", "-x", "a".repeat(65), "..", "", "node01\u0000"]));
  const path = (r: Rng, tame: boolean) => (tame || r.chance(0.6) ? r.pick(paths) : r.chance(0.5) ? r.pick(badPaths) : randomString(r));
  const count = (valid: number[]) => (r: Rng, tame: boolean) => r.pick(tame ? valid : [0, -1, 1.5, 100_001, 1e308, "1", null, 2 ** 53]);
  const printable = (r: Rng, tame: boolean) => (tame ? r.pick(PRINTABLE) : r.pick(NASTY));
  return {
    name: printable,
    argv: (r, tame) => (tame ? ["true", ...r.pick([["x".repeat(65536)], Array.from({ length: 4095 }, () => "x"), PRINTABLE])] : r.pick([[], ["true", ...Array.from({ length: 4097 }, () => "x")], ["true", "x".repeat(65537)], ["true", "a\u0000b"]])),
    "argv[]": (r, tame) => (tame ? r.pick([...PRINTABLE, "\t", "a\nb"]) : r.pick(NASTY)),
    script: (r, tame) => `#!/bin/true\n${tame ? r.pick(["", "x".repeat((1 << 20) - 12), ...PRINTABLE]) : r.pick(["\u0000", "x".repeat(1 << 20), randomString(r)])}`,
    cwd: (r, tame) => (tame ? r.pick(["/", "/root", theirs, mine, "/nonexistent", "/etc", "/proc/1", "/tmp/../root", `/${"a".repeat(4095)}`]) : r.pick(["/\u0000", "relative", `/${"a".repeat(4096)}`, "", "../.."])),
    output: path,
    error: path,
    timeLimit: (r, tame) => (tame ? r.pick(["1-00:00:00", "5:00", "365-00:00:00", 1, 365 * 86400, "0:01"]) : r.pick(["0", "-1", "99999999:00:00", "1:2:3:4", "", 365 * 86400 + 1, 0.5, "1e3", 1e308, "1-", ":"])),
    env: (r, tame) =>
      tame
        ? r.pick([{ LD_PRELOAD: "/nonexistent/ebb-fuzz.so" }, { EBB_TOKEN: jobToken(clusterKey, other.running) }, Object.fromEntries(Array.from({ length: 4096 }, (_, i) => [`V${i}`, "x"])), { A: "x".repeat(131069) }])
        : r.pick([Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`V${i}`, "x"])), { A: "x".repeat(131073) }, { "": "x" }, { A: "\u0000" }]),
    "env{key}": (r, tame) => (tame ? r.pick(["LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "EBB_TOKEN", "EBB_JOB_ID", "HOME", "USER", "BASH_ENV", "_", "a".repeat(4096)]) : r.pick(["1BAD", "A=B", "", "__proto__", "a".repeat(4097), "ÄÖ", "A B"])),
    "env{}": (r, tame) => (tame ? r.pick([...PRINTABLE, "a\tb\nc"]) : r.pick(NASTY)),
    // A large array, seldom, and at a tenth of the cap: cancelling all 10,000 tasks of one in one
    // request holds the controller's event loop for seconds today (its nodes go DOWN, their jobs NODE_FAIL).
    array: (r, tame) => (tame ? (r.chance(0.02) ? `0-${MAX_ARRAY_TASKS / 10 - 1}` : r.pick(["0-3", "1,1,1,1", "0-3%1", "1-4000000:1000000", "7"])) : r.pick(["0-10000", "0-3%0", "4000001", "0-1:0", "-1", "0-3%999999999999999999999", "3-1", ",", "1-3%", "0-" + "9".repeat(400)])),
    dependency: (r, tame) =>
      tame
        ? r.pick([`afterok:${r.pick(ids())}`, `afterany:${r.pick(ids())}:${GHOST_JOB}`, "singleton", `afterok:${other.kept.array}_1`, `afternotok:${side.parent}?afterok:${other.kept.held}`, `after:${side.parent}`])
        : r.pick([`afterok:${"1:".repeat(2000)}1`, "afterok:", "after:0", "afterok:1_99999999999999999999", "afterok:-1", "singleton,singleton?x"]),
    // Counts the 3-node cluster can hold, most often: a job of 100,000 nodes is refused before anything else is read.
    nodes: count([1, 1, 2, 3, 100_000]),
    minNodes: count([1, 2, 3]),
    maxNodes: count([1, 3, 100_000]),
    tasks: count([1, 2, 4, 1_000_000]),
    tasksPerNode: count([1, 2, 4096]),
    "exclude[]": nodes,
    "nodelist[]": nodes,
    // A step that waits for new nodes waits up to `wait` seconds: kept short so the fuzzing does not stall on it.
    wait: (r, tame) => (tame ? r.pick([0, 0.01, 0.05]) : r.pick([-1, 3600.0001, 1e308, "1", null])),
    envDigest: (r, tame) => (tame ? r.pick(["0".repeat(64), "f".repeat(64)]) : r.pick(["G".repeat(64), "0".repeat(65), "0".repeat(63), "F".repeat(64)])),
    user: (r, tame) => (tame ? r.pick(["root", "ebbt_alice", "ebbt_bob", "a$", "_", "nobody", "a".repeat(32)]) : r.pick(["-x", "a".repeat(33), "ROOT", "", "a b", "../x"])),
    reason: printable,
    // GET /v1/jobs?id=: the other user's jobs among others, or lists that are not ids.
    id: (r, tame) => (tame ? [r.pick(ids()), side.parent, other.kept.script].join(",") : r.pick(["0", "1,,2", "x", "1".repeat(17), Array.from({ length: 1001 }, (_, i) => i + 1).join(","), `${other.running}_1`])),
  };
}

/**
 * What keeps the fuzzing bounded: a submission runs nothing but `true` (or a program that does not
 * exist) and is mostly held; a step never waits long for new nodes.
 */
function bounded(r: Rng, key: string, body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  if (Array.isArray(b.argv) && b.argv.length > 0) b.argv[0] = r.pick(["true", "/bin/true", "/usr/bin/true", "ebb-fuzz-no-such-program", "./ebb-fuzz-none", "💥", "", "a\u0000b"]);
  if (key === "post /v1/jobs" || key === "post /v1/jobs/test") {
    // Exactly one program, as often as not: most bodies should get past that check.
    if (r.chance(0.8) && [b.argv, b.script, b.interactive].filter((x) => x !== undefined).length !== 1) {
      const keep = r.pick(["argv", "script", "interactive"]);
      for (const k of ["argv", "script", "interactive"]) if (k !== keep) delete b[k];
      b[keep] ??= keep === "argv" ? ["true"] : keep === "script" ? "#!/bin/true\n" : true;
    }
    if (typeof b.script === "string" && !b.script.startsWith("#!/bin/true\n")) b.script = `#!/bin/true\n${b.script}`;
    if (r.chance(0.8)) coherent(b);
    if (r.chance(0.85)) b.hold = true;
  }
  if (b.newNodes === true && !(typeof b.wait === "number" && b.wait <= 0.05)) b.wait = 0.05;
  return b;
}

/** The rules between a submission's fields kept, so that its values get further than them. */
function coherent(b: Record<string, any>): void {
  if (b.elasticSettings !== undefined || b.minNodes !== undefined || b.maxNodes !== undefined || b.elastic === true) {
    b.elastic = true;
    delete b.nodes;
    if (b.minNodes === undefined && b.maxNodes === undefined) b.maxNodes = 1;
    if (typeof b.minNodes === "number" && typeof b.maxNodes === "number" && b.minNodes > b.maxNodes) [b.minNodes, b.maxNodes] = [b.maxNodes, b.minNodes];
    if (typeof b.elasticSettings === "object" && b.elasticSettings !== null) delete b.elasticSettings.lower;
  }
  if (typeof b.tasks === "number" && typeof b.nodes === "number" && b.tasks < b.nodes) delete b.tasks;
  if (b.interactive) delete b.array;
}

/** A query string from the route's query parameters: hostile values, unknown names, repeats, bad escapes. */
function query(r: Rng, params: { name: string; schema: JsonSchema }[], side: Side): string {
  const parts: string[] = [];
  for (const p of params) {
    if (!r.chance(0.5)) continue;
    let v = p.name === "wait" ? r.pick([0, 0.01, -1, 51, "x", "", "1e309", "NaN"]) : p.name === "job" && r.chance(0.5) ? jobId(r, side, false) : generate(r, p.schema, { hints: hints(side) }, p.name);
    if (p.name === "state" && r.chance(0.5)) v = r.pick(["PENDING", "RUNNING,COMPLETED", "pending, running", ",", "PENDING,".repeat(3000)]);
    parts.push(`${p.name}=${enc(typeof v === "string" ? v : JSON.stringify(v) ?? "")}`);
    if (r.chance(0.05)) parts.push(`${p.name}=${enc(String(randomValue(r)))}`);
  }
  if (r.chance(0.05)) parts.push(`${enc(randomString(r))}=${enc(randomString(r))}`);
  if (r.chance(0.05)) parts.push(r.pick(["%", "%zz", "a=%E0%A4%A", "=", "&&", "a", "limit=%00"]));
  return parts.length ? `?${parts.join("&")}` : "";
}

// ---- the routes -----------------------------------------------------------------------------------

interface Operation {
  method: string;
  path: string;
  body?: JsonSchema;
  query: { name: string; schema: JsonSchema }[];
}

interface Request {
  actor: Actor;
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

interface RouteFuzz {
  /** The share of requests with the cluster's token (the routes only it may use get more). */
  admin: number;
  /** The path, its parameters filled in. */
  path(r: Rng, side: Side): string;
  /** The jobs a 2xx answer names or changed: each must be one the caller may act on. */
  jobs?(json: any): number[];
  /** The jobs a 2xx answer shows: another's only without its private part (`private`, no command, directory or files). */
  shows?(json: any): any[];
  /** Only the cluster's token or an admin's may get a 2xx. */
  adminOnly?: boolean;
  /** The job route may end the job it names (the users' running sleeps are left out of it). */
  ends?: boolean;
  headers?(r: Rng): Record<string, string>;
}

const fixed = (p: string) => () => p;
const jobRoute = (suffix: string, ends: boolean, jobs: (json: any) => number[]): RouteFuzz => ({ admin: 0, path: (r, side) => `/v1/jobs/${jobId(r, side, ends)}${suffix}`, jobs, ends });
const upgradeHeaders = (r: Rng): Record<string, string> => (r.chance(0.5) ? { Upgrade: r.pick(["websocket", "WebSocket", "h2c", ""]), Connection: r.pick(["Upgrade", "keep-alive", ""]), "Sec-WebSocket-Version": r.pick(["13", "8", "x"]) } : {});

/** One entry per route of the OpenAPI document (as "method path"): a route without one fails the test. */
const ROUTES: Record<string, RouteFuzz> = {
  "get /": { admin: 0.1, path: fixed("/") },
  "get /ui": { admin: 0.1, path: fixed("/ui") },
  "get /metrics": { admin: 0.3, path: fixed("/metrics"), adminOnly: true },
  "get /v1/health": { admin: 0.1, path: fixed("/v1/health") },
  "get /v1/openapi.json": { admin: 0.1, path: fixed("/v1/openapi.json") },
  "post /v1/jobs": { admin: 0, path: fixed("/v1/jobs"), jobs: (j) => [j.id] },
  "post /v1/jobs/test": { admin: 0, path: fixed("/v1/jobs/test"), jobs: () => [] },
  "get /v1/jobs": { admin: 0, path: fixed("/v1/jobs"), shows: (j) => j.jobs },
  "get /v1/jobs/{id}": { ...jobRoute("", false, () => []), jobs: undefined, shows: (j) => [j] },
  "delete /v1/jobs/{id}": jobRoute("", true, (j) => [j.id, ...j.jobs]),
  "post /v1/jobs/{id}/hold": jobRoute("/hold", true, (j) => [j.id, ...j.jobs]),
  "post /v1/jobs/{id}/release": jobRoute("/release", true, (j) => [j.id, ...j.jobs]),
  "post /v1/jobs/{id}/signal": jobRoute("/signal", true, (j) => [j.id, ...j.jobs]),
  "post /v1/jobs/{id}/requeue": jobRoute("/requeue", true, (j) => [j.id, ...j.jobs]),
  "post /v1/jobs/{id}/complete": jobRoute("/complete", true, (j) => [j.id, ...j.jobs]),
  // A lower time limit may end the job it names.
  "patch /v1/jobs/{id}": jobRoute("", true, (j) => [j.id]),
  "post /v1/jobs/{id}/resize": jobRoute("/resize", false, (j) => [j.id]),
  "post /v1/jobs/{id}/steps": jobRoute("/steps", false, (j) => [j.jobId]),
  "get /v1/plans": { admin: 0, path: fixed("/v1/plans") },
  "get /v1/starts": { admin: 0.1, path: fixed("/v1/starts") },
  "get /v1/usage": { admin: 0.1, path: fixed("/v1/usage") },
  "get /v1/partitions": { admin: 0.1, path: fixed("/v1/partitions") },
  "get /v1/priority": { admin: 0.1, path: fixed("/v1/priority") },
  "get /v1/shares": { admin: 0.1, path: fixed("/v1/shares") },
  "post /v1/tokens": { admin: 0.4, path: fixed("/v1/tokens"), adminOnly: true },
  "get /v1/nodes": { admin: 0.1, path: fixed("/v1/nodes") },
  "post /v1/nodes/{name}/drain": { admin: 0.4, path: (r) => `/v1/nodes/${nodeName(r)}/drain`, adminOnly: true },
  "post /v1/nodes/{name}/resume": { admin: 0.4, path: (r) => `/v1/nodes/${nodeName(r)}/resume`, adminOnly: true },
  "get /v1/timeline": { admin: 0.1, path: fixed("/v1/timeline") },
  "get /v1/stream": { admin: 0.1, path: fixed("/v1/stream") },
  "get /v1/launcher": { admin: 0.1, path: fixed("/v1/launcher"), headers: upgradeHeaders },
  "get /v1/agent": { admin: 0.1, path: fixed("/v1/agent"), headers: upgradeHeaders },
};

function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item)) {
      const params: any[] = op.parameters ?? [];
      ops.push({ method, path, body: op.requestBody?.content?.["application/json"]?.schema, query: params.filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: p.schema })) });
    }
  return ops;
}

function request(r: Rng, op: Operation, fuzz: RouteFuzz, side: Side): Request {
  const actor = actorFor(r, side, fuzz.admin);
  let body: string | undefined;
  if (op.body) {
    // A valid body, a valid body with one hostile field, or hostile throughout.
    const h = hints(side);
    const roll = r.next();
    let value = generate(r, op.body, { hints: h, tame: roll < 0.7, maxArray: 4097 });
    if (roll >= 0.25 && roll < 0.7 && op.body.properties) {
      const [key, schema] = r.pick(Object.entries(op.body.properties));
      value = { ...(value as object), [key]: generate(r, schema, { hints: h, maxArray: 4097 }, key) };
    }
    body = hostileJson(r, bounded(r, `${op.method} ${op.path}`, value));
  } else if (op.method !== "get" && r.chance(0.1)) body = r.chance(0.5) ? randomString(r) : deepJson(5000, true);
  return { actor, method: op.method.toUpperCase(), path: fuzz.path(r, side) + query(r, op.query, side), body, headers: fuzz.headers?.(r) };
}

// ---- sending and judging --------------------------------------------------------------------------

interface Answer {
  status: number;
  type: string;
  text: string;
}

async function send(req: Request): Promise<Answer> {
  const headers: Record<string, string> = { "Content-Type": "application/json", ...req.headers };
  if (req.actor.token !== undefined) headers.Authorization = `Bearer ${req.actor.token}`;
  const res = await fetch(`${c.url}${req.path}`, { method: req.method, headers, body: req.body, redirect: "manual", signal: AbortSignal.timeout(60_000) });
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    // A stream does not end: its first event is enough.
    const reader = res.body!.getReader();
    const first = await reader.read();
    await reader.cancel();
    return { status: res.status, type, text: new TextDecoder().decode(first.value) };
  }
  return { status: res.status, type, text: await res.text() };
}

/** Who each job is and who submitted it (read with the cluster's token; neither ever changes). */
const owners = new Map<number, { user: string | null; submittedBy: number | null } | null>();
async function ownerOf(id: number) {
  if (!owners.has(id)) {
    const r = await c.api("GET", `/v1/jobs/${id}`);
    owners.set(id, r.status === 200 ? { user: r.json.user, submittedBy: r.json.submittedBy } : null);
  }
  return owners.get(id);
}

async function mayActOn(actor: Actor, id: number): Promise<boolean> {
  if (actor.kind === "admin") return true;
  if (actor.kind === "invalid") return false;
  const o = await ownerOf(id);
  if (!o) return false;
  if (actor.kind === "user") return o.user === actor.user;
  return id === actor.job || o.submittedBy === actor.job;
}

const failures: string[] = [];
function fail(what: string, req: Request, a: Answer) {
  if (failures.length < 20) failures.push(`${what}: ${req.actor.kind}${"user" in req.actor ? ` ${req.actor.user}` : ""}${req.actor.kind === "invalid" ? ` (token ${JSON.stringify(req.actor.token?.slice(0, 12))})` : ""} ${req.method} ${req.path.slice(0, 200)} ${req.body?.slice(0, 200) ?? ""} -> ${a.status} ${a.text.slice(0, 300)}`);
}

async function judge(key: string, fuzz: RouteFuzz, req: Request, a: Answer, side: Side): Promise<void> {
  if (a.status >= 500) return fail("5xx", req, a);
  // Whatever the answer, the other user's secret is not in it (nor in anything an invalid token gets).
  if (req.actor.kind !== "admin" && a.text.includes(sides[side.other].secret)) return fail(`${side.other}'s secret in the answer`, req, a);
  // Bun refuses a request line and headers over 16 KiB itself (431, no body), before any of ebb's code runs.
  if (a.status === 431 && a.text === "") return;
  // So does it a body over twice the API's limit (the API answers one over its limit itself, in JSON).
  if (a.status === 413 && a.text === "" && Buffer.byteLength(req.body ?? "") > 2 * MAX_BODY) return;
  if (a.status >= 400) {
    let err: any;
    try {
      err = JSON.parse(a.text).error;
    } catch {}
    if (typeof err?.code !== "string" || typeof err?.message !== "string") fail("an error that is not {error:{code,message}}", req, a);
    return;
  }
  if (a.status >= 300) return;
  if (req.actor.kind === "invalid" && !["get /", "get /ui", "get /v1/health", "get /v1/openapi.json"].includes(key)) return fail("an invalid token was served", req, a);
  if (fuzz.adminOnly && req.actor.kind !== "admin") return fail("a user's token was served what only the cluster's token may", req, a);
  if (fuzz.shows) {
    for (const job of fuzz.shows(JSON.parse(a.text)))
      if (!(await mayActOn(req.actor, job.id)) && !(job.private === true && job.argv === null && job.cwd === "" && job.output === null && job.error === null && (job.env === undefined || Object.keys(job.env).length === 0) && !job.script))
        return fail(`job ${job.id} is not the caller's and was shown with its private part`, req, a);
  }
  if (!fuzz.jobs) return;
  const ids = fuzz.jobs(JSON.parse(a.text));
  for (const id of ids) if (!(await mayActOn(req.actor, id))) return fail(`job ${id} is not the caller's`, req, a);
  if (key === "post /v1/jobs" && req.actor.kind !== "admin") {
    const id = ids[0]!;
    side.own.push(id);
    if (side.own.length > 300) side.own.splice(3, 1);
  }
}

/** What the other user could change of a user's kept jobs: it must stay as it was. */
async function keptState(side: Side) {
  const out: Record<string, unknown> = {};
  for (const id of [side.running, side.kept.held, side.kept.array, side.kept.done, side.kept.script]) {
    const j = (await c.api("GET", `/v1/jobs/${id}`)).json;
    out[id] = { state: j.state, held: j.held, exitCode: j.exitCode, endTime: j.endTime, user: j.user, adaptations: j.adaptations.length };
  }
  const tasks = (await c.api("GET", `/v1/jobs?array=${side.kept.array}`)).json.jobs.map((j: any) => `${j.id}:${j.state}:${j.held}`);
  return { ...out, tasks };
}

async function alive(): Promise<void> {
  const h = await fetch(`${c.url}/v1/health`, { signal: AbortSignal.timeout(30_000) });
  expect(h.status).toBe(200);
  expect(c.controller.exitCode).toBeNull();
}

test(`API: ${CASES} hostile requests per route under two users: no 5xx, JSON errors, nothing of the other's touched, the controller alive (seed ${SEED})`, async () => {
  const doc = (await c.api("GET", "/v1/openapi.json")).json;
  const ops = operations(doc);
  const keys = ops.map((o) => `${o.method} ${o.path}`);
  expect(keys.filter((k) => !ROUTES[k])).toEqual([]); // a route without a generator
  expect(Object.keys(ROUTES).filter((k) => !keys.includes(k))).toEqual([]); // a generator without a route

  const before = { alice: await keptState(sides.ebbt_alice), bob: await keptState(sides.ebbt_bob) };
  const counts: string[] = [];
  for (const op of ops) {
    const key = `${op.method} ${op.path}`;
    const fuzz = ROUTES[key]!;
    const statuses = new Map<number, number>();
    // Each user its own seeded stream per route: the same requests on every run with this seed.
    await Promise.all(
      USERS.map(async (user) => {
        const r = rng(SEED ^ Bun.hash.crc32(`${user} ${key}`));
        for (let i = 0; i < CASES / USERS.length; i++) {
          const req = request(r, op, fuzz, sides[user]);
          const a = await send(req);
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
          await judge(key, fuzz, req, a, sides[user]);
        }
      }),
    );
    counts.push(`${key}: ${[...statuses].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}x${n}`).join(" ")}`);
    expect(failures).toEqual([]);
    await alive();
  }
  console.log(`seed ${SEED}\n${counts.join("\n")}`);

  // Each user's kept jobs are as they were; the running sleeps still run.
  expect({ alice: await keptState(sides.ebbt_alice), bob: await keptState(sides.ebbt_bob) }).toEqual(before);
  for (const user of USERS) expect((await c.job(sides[user].running)).state).toBe("RUNNING");
  // No job wrote where its user may not.
  for (const user of USERS) {
    const { dir, uid } = sides[user];
    expect(readFileSync(join(dir, "canary"), "utf8")).toBe(`${user}\n`);
    for (const f of readdirSync(dir)) expect({ file: f, uid: statSync(join(dir, f)).uid }).toEqual({ file: f, uid });
  }
  expect(existsSync(ROOT_PROBE)).toBe(false);
  expect(readFileSync("/etc/passwd", "utf8")).toBe(passwd);
  for (const n of NODES) await c.api("POST", `/v1/nodes/${n}/resume`);
  await alive();
}, 600_000);

/** Everything a raw launcher connection with `token` is told after `messages` (each of which asks about another's job), once each request has its answer. */
async function launcherAnswers(token: string, messages: Record<string, unknown>[], answers: number): Promise<string[]> {
  const got: string[] = [];
  const ws = new WebSocket(`${c.url.replace("http", "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
  ws.onmessage = (ev) => got.push(String(ev.data));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("the launcher socket did not open"));
  });
  ws.send(JSON.stringify({ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION }));
  for (const m of messages) ws.send(JSON.stringify(m));
  await waitFor(`${answers} answers on the launcher socket`, () => got.length >= answers);
  ws.close();
  return got;
}

test("neither user, nor a job of theirs, reads the other's environment, command, directory, files, script or output: not through any route, nor the launcher's WebSocket", async () => {
  const doc = (await c.api("GET", "/v1/openapi.json")).json;
  for (const user of USERS) {
    const me = sides[user];
    const them = sides[me.other];
    const theirs = [...them.keptIds, them.kept.array, `${them.kept.array}_1`];
    const read: { what: string; text: string }[] = [];
    for (const token of [me.token, jobToken(clusterKey, me.parent)]) {
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        if (path === "/v1/launcher" || path === "/v1/agent") continue;
        for (const method of Object.keys(item)) {
          const filled = path.includes("{id}") ? theirs.map((id) => path.replace("{id}", String(id))) : path.includes("{name}") ? NODES.map((n) => path.replace("{name}", n)) : [path];
          for (const p of filled) {
            const query = p === "/v1/usage" ? "?since=2000-01-01T00:00:00Z" : p === "/v1/plans" ? `?job=${them.running}` : p === "/v1/jobs" ? `?id=${theirs.slice(0, 6).join(",")}` : "";
            const body = method === "get" ? undefined : p.endsWith("/steps") ? JSON.stringify({ argv: ["true"], cwd: "/", envDigest: "0".repeat(64) }) : p.endsWith("/resize") ? '{"nodes":1}' : p.endsWith("/signal") ? '{"signal":"SIGKILL"}' : p === "/v1/tokens" ? `{"user":"${user}"}` : p.startsWith("/v1/jobs") && !p.includes("/", 9) ? '{"argv":["true"],"hold":true,"output":"/dev/null"}' : undefined;
            const a = await send({ actor: { kind: "invalid", token }, method: method.toUpperCase(), path: p + query, body });
            read.push({ what: `${method} ${p}${query} -> ${a.status}`, text: a.text });
          }
        }
      }
      // The job listing shows their jobs, without what is private.
      const listed = (await c.api("GET", `/v1/jobs?id=${theirs.slice(0, 5).join(",")}`, undefined, token)).json.jobs;
      for (const id of theirs.slice(0, 5)) expect(listed.map((j: any) => j.id)).toContain(id);
      for (const j of listed) expect(j.user).toBe(them.user);
      for (const j of listed) expect({ id: j.id, private: j.private, argv: j.argv, cwd: j.cwd, output: j.output, error: j.error }).toEqual({ id: j.id, private: true, argv: null, cwd: "", output: null, error: null });
      // The launcher's WebSocket: follow, adopt, create a step in, report on their running job.
      const ws = await launcherAnswers(
        token,
        [
          { t: "attach", jobId: them.running },
          { t: "adopt", jobId: them.running, stepId: 0, req: 1, nodes: [NODES[0]] },
          { t: "step.create", jobId: them.running, req: 2, step: { argv: ["true"], cwd: "/", envDigest: "0".repeat(64) } },
          { t: "step.end", jobId: them.kept.done, stepId: 0, exitCode: 0 },
        ],
        4,
      );
      read.push(...ws.map((text) => ({ what: "the launcher socket", text })));
      expect(ws.map((m) => JSON.parse(m).code)).toEqual(["forbidden", "forbidden", "forbidden", "forbidden"]);
    }
    expect(read.filter((r) => r.text.includes(them.secret)).map((r) => r.what)).toEqual([]);
    // Their own token reads it: the secret is there to be leaked.
    const own = await c.api("GET", `/v1/jobs/${them.kept.done}`, undefined, them.token);
    expect(JSON.stringify(own.json)).toContain(them.secret);
  }
}, 300_000);
