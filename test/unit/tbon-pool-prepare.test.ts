/**
 * PeerPool.prepare against an agent's real step listener (roles/agent/server.ts): a grow's edges
 * open ahead of their launch (docs/adaptation.md §7.1, `links`), the launch then goes on the
 * connection already made, and one never used is closed by the pool, not left for the agent.
 */
import { afterAll, expect, test } from "bun:test";
import { argvDigest, envDigest, signCredential } from "../../src/proto/credential.ts";
import type { StepDown, StepSpec } from "../../src/proto/step.ts";
import { serveSteps } from "../../src/roles/agent/server.ts";
import { PeerPool, type StepEndpoint } from "../../src/tbon/pool.ts";
import { OpenAhead } from "../../src/roles/launcher/open-ahead.ts";
import type { ReallocMsg } from "../../src/roles/launcher/controller-link.ts";

const key = "k".repeat(64);
const env = { PATH: "/usr/bin:/bin" };
const jobEnv = { EBB_JOB_ID: "7" };

/** The agent's side: how many connections it saw opened and closed, and what each delivered. */
const opened: number[] = [];
const closed: number[] = [];
const delivered: { conn: number; msg: StepDown }[] = [];
const waiters: (() => void)[] = [];
const changed = () => waiters.splice(0).forEach((w) => w());
const until = async (done: () => boolean) => {
  while (!done()) await new Promise<void>((resolve) => waiters.push(resolve));
};
const endpoint: StepEndpoint = {
  attach: () => {
    const conn = opened.length;
    opened.push(conn);
    changed();
    return {
      deliver: (msg) => (delivered.push({ conn, msg }), changed()),
      closed: () => (closed.push(conn), changed()),
    };
  },
};
const server = serveSteps({ host: "127.0.0.1", port: 0 }, endpoint, key);
const addr = `127.0.0.1:${server.port}`;
afterAll(() => server.stop(true));

let step = 0;
/** A launch the listener takes (a cluster-key credential, unexpired) for a step of its own. */
function launch(): StepDown {
  const stepId = ++step;
  const nodes = [{ name: "n1", addr }];
  const spec = { jobId: 7, stepId, argv: ["true"], env, jobEnv, cwd: "/tmp", nodes, tasks: [1], jobNodes: ["n1"], fanout: 8, pmi: "none" } as StepSpec;
  const cred = signCredential(key, { jobId: 7, stepId, nodes: ["n1"], expires: Date.now() + 60_000, argv: argvDigest(["true"]), env: envDigest(env), jobEnv: envDigest(jobEnv), cwd: "/tmp" } as never);
  return { t: "launch", step: `7.${stepId}`, cred, spec };
}

test("a link opened ahead is connected before its first message, which then goes on that same connection", async () => {
  const pool = new PeerPool();
  expect(pool.prepare(addr)).toBe(true);
  await until(() => opened.length === 1);
  expect(delivered).toEqual([]);
  const msg = launch();
  pool.get(addr).send(msg);
  await until(() => delivered.length === 1);
  expect(delivered[0]!.conn).toBe(0);
  expect((delivered[0]!.msg as { step: string }).step).toBe(msg.step);
  expect(opened.length).toBe(1);
  pool.close();
  await until(() => closed.includes(0));
});

test("a link opened ahead and never used is closed by the pool; the next message opens a new one", async () => {
  const pool = new PeerPool();
  pool.prepare(addr, 50);
  await until(() => opened.length === 2);
  await until(() => closed.includes(1));
  expect(delivered.filter((d) => d.conn === 1)).toEqual([]);
  pool.get(addr).send(launch());
  await until(() => delivered.some((d) => d.conn === 2));
  expect(opened.length).toBe(3);
  // Prepared again while it has a connection: nothing new is opened, and the used one stays.
  expect(pool.prepare(addr, 50)).toBe(false);
  pool.get(addr).send(launch());
  await until(() => delivered.filter((d) => d.conn === 2).length === 2);
  expect(opened.length).toBe(3);
  expect(closed.includes(2)).toBe(false);
  pool.close();
});

test("orders: handed on at once when no connection waits to be written; after the loop's poll when one was opened this turn, and every order behind it too, in order", async () => {
  const handed: number[] = [];
  const fresh = new Set(["127.0.0.1:2", "127.0.0.1:3"]);
  const ahead = new OpenAhead((a) => fresh.delete(a), (m) => handed.push(m.adaptId));
  const order = (adaptId: number, added: string[]) => ({ t: "realloc", jobId: 1, adaptId, nodes: [], added: added.map((a, i) => ({ name: `n${i}`, addr: a })), removed: [], deadline: 0 }) as ReallocMsg;
  ahead.realloc(order(1, ["127.0.0.1:1"].filter((a) => fresh.has(a))));
  expect(handed).toEqual([1]);
  ahead.links([{ name: "n2", addr: "127.0.0.1:2" }]);
  ahead.realloc(order(2, ["127.0.0.1:2"]));
  ahead.realloc(order(3, []));
  expect(handed).toEqual([1]);
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(handed).toEqual([1, 2, 3]);
  ahead.realloc(order(4, ["127.0.0.1:3"]));
  expect(handed).toEqual([1, 2, 3]);
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(handed).toEqual([1, 2, 3, 4]);
  ahead.realloc(order(5, ["127.0.0.1:3"]));
  expect(handed).toEqual([1, 2, 3, 4, 5]);
});
