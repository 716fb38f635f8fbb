/** Input limits with the controller as its own process: body sizes while reading, unread answers per user, tasks against CPUs. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { UNREAD_PER_USER } from "../../src/api/json-stream.ts";
import { BODY_BYTES_PER_USER, MAX_BODY, WAITS_PER_USER } from "../../src/api/app.ts";
import { IDLE_S } from "../../src/roles/controller/server.ts";
import { startCluster, type TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 2, cpus: 2 });
});
afterAll(async () => {
  await c?.stop();
});

/** The controller's resident memory and its peak, in MiB, from /proc. */
function rss(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)![1]);
  return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** POST a body of `total` bytes as a chunked stream (no Content-Length); the status, or the error if the server hung up. */
async function chunkedPost(total: number): Promise<number | string> {
  const chunk = new Uint8Array(1 << 20).fill(0x20);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (sent === 0) {
        ctl.enqueue(new TextEncoder().encode('{"argv":["true"],"name":"'));
        sent = 1;
        return;
      }
      if (sent >= total) return ctl.close();
      sent += chunk.length;
      ctl.enqueue(chunk);
    },
  });
  try {
    const res = await fetch(`${c.url}/v1/jobs`, {
      method: "POST",
      headers: { Authorization: `Bearer ${c.token}`, "Content-Type": "application/json", "Transfer-Encoding": "chunked" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    await res.arrayBuffer().catch(() => {});
    return res.status;
  } catch (e) {
    return (e as Error).message;
  }
}

test("chunked bodies are counted while read: 4 x 100 MB leave the controller's memory flat", async () => {
  const pid = c.controller.pid;
  const before = rss(pid);
  const results = await Promise.all([0, 1, 2, 3].map(() => chunkedPost(100 << 20)));
  for (const r of results) if (typeof r === "number") expect(r).toBe(413);
  const after = rss(pid);
  console.log(`controller RSS before ${before.now.toFixed(0)} MiB (peak ${before.peak.toFixed(0)}), after 4 x 100 MB chunked bodies ${after.now.toFixed(0)} MiB (peak ${after.peak.toFixed(0)}); results ${JSON.stringify(results)}`);
  // Buffering even one of the bodies would add 100 MiB.
  expect(after.peak - before.peak).toBeLessThan(64);
  // And the controller still answers.
  expect((await c.api("GET", "/v1/health")).status).toBe(200);
});

test("a body with a Content-Length over the limit is refused before it is read", async () => {
  const r = await fetch(`${c.url}/v1/jobs`, {
    method: "POST",
    headers: { Authorization: `Bearer ${c.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ argv: ["true"], name: "x".repeat(3 << 20) }),
  }).catch((e: Error) => e);
  if (r instanceof Response) expect(r.status).toBe(413);
});

test("answers one user does not read hold a slot each: past 64 open at once a listing or a long job is refused (429, saying why), a closed one gives its slot back", async () => {
  // Unfixed: every one was served and stayed open with what it held (~2 MiB each: 100 listings grew
  // the controller by 175 MB, 200 priorities by 340 MB), bounded only by the controller's descriptors.
  const held = await c.submit({ argv: ["true", ...Array(4).fill("x".repeat(60_000))], array: "1-64", hold: true });
  const path = `/v1/jobs?array=${held}`;
  // Listings of 32 MB whose clients read the status line and then nothing.
  const unread = await Promise.all(
    Array.from({ length: UNREAD_PER_USER }, () =>
      new Promise<Socket>((resolve, reject) => {
        const s = connect({ host: "127.0.0.1", port: c.port }, () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.token}\r\n\r\n`));
        s.once("data", (d) => (s.pause(), String(d).startsWith("HTTP/1.1 200") ? resolve(s) : reject(new Error(String(d).slice(0, 300)))));
        s.once("error", reject);
      }),
    ),
  );
  for (const refused of [await c.api("GET", path), await c.api("GET", `/v1/jobs/${held}`)])
    expect([refused.status, refused.json.error]).toEqual([429, { code: "too_many_unread", message: expect.stringContaining(`has ${UNREAD_PER_USER} answers open that are not yet read to their end`) }]);
  unread[0]!.destroy();
  await waitFor("the closed listing's slot back", async () => (await c.api("GET", `/v1/jobs/${held}`)).status === 200);
  expect((await c.api("GET", `/v1/jobs/${held}`)).json.argv[1]).toBe("x".repeat(60_000));
  for (const s of unread) s.destroy();
  await c.api("DELETE", `/v1/jobs/${held}`);
});

test("one user's bodies being read hold at most 16 MiB together: 8 of 2 MiB sent by half hold it, the next is refused (429, saying why), another user's is read; a closed one gives its bytes back", async () => {
  // Unfixed: each request held up to 2 MiB while its body came, and nothing bounded how many one
  // user sent at once (the controller's descriptors: 20,000 here, 40 GB).
  const other = (await c.api("POST", "/v1/tokens", { user: "nobody" })).json.token;
  const halfSent = Array.from({ length: BODY_BYTES_PER_USER / MAX_BODY }, () => {
    const s = connect({ host: "127.0.0.1", port: c.port }, () =>
      s.write(`POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.token}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY}\r\n\r\n${" ".repeat(MAX_BODY / 2)}`),
    );
    s.on("error", () => {});
    return s;
  });
  const refused = await waitFor("the held bodies to be counted", async () => {
    const r = await c.api("POST", "/v1/jobs", {});
    return r.status === 429 && r.json.error;
  });
  expect(refused).toEqual({ code: "too_many_bytes", message: expect.stringMatching(/^root's requests hold 16777216 bytes of bodies being read; \d+ more would pass the 16777216 one user's may hold at once/) });
  expect((await c.api("POST", "/v1/jobs", {}, other)).status).toBe(400);
  halfSent[0]!.destroy();
  await waitFor("the closed body's bytes back", async () => (await c.api("POST", "/v1/jobs", {})).status === 400);
  for (const s of halfSent) s.destroy();
});

test("one user may hold 64 requests waiting for a job to end (?wait=), the next is refused (429); a kept-alive connection silent after its answer is closed within seconds, a waiting one is not", async () => {
  // Unfixed: each ?wait= held a descriptor for up to 50 s, as many as one user opened; a kept-alive
  // connection silent after its answer held one for 60 s (measured: 60.0 s, now 12.0 s).
  const held = await c.submit({ argv: ["true"], hold: true });
  const stop = new AbortController();
  const waiting = Array.from({ length: WAITS_PER_USER }, () =>
    fetch(`${c.url}/v1/jobs/${held}?wait=50`, { headers: { Authorization: `Bearer ${c.token}` }, signal: stop.signal }).then((r) => r.status, () => "aborted"),
  );
  const refused = await waitFor("the waits to be counted", async () => {
    const r = await c.api("GET", `/v1/jobs/${held}?wait=50`);
    return r.status === 429 && r.json.error;
  });
  expect(refused).toEqual({ code: "too_many_waits", message: `root has ${WAITS_PER_USER} requests waiting for a job to end (?wait=), the most one user may (${WAITS_PER_USER}); let some end and try again` });
  stop.abort();
  await Promise.all(waiting);
  // Kept alive after its answer, then silent (one that sends nothing, or its headers a byte at a
  // time, Bun closes after ~10 s of its own, before and after).
  const silent = new Promise<string>((resolve) => {
    const s = connect({ host: "127.0.0.1", port: c.port }, () => s.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"));
    s.on("data", () => {});
    s.on("close", () => resolve("closed by the controller"));
    s.on("error", () => {});
  });
  const longPoll = c.api("GET", `/v1/jobs/${held}?wait=${IDLE_S + 2}`);
  expect(await silent).toBe("closed by the controller");
  expect((await longPoll).status).toBe(200);
  await c.api("DELETE", `/v1/jobs/${held}`);
}, 60_000);

test("tasks are checked against the nodes' CPUs; --overcommit allows more", async () => {
  const tooMany = await c.api("POST", "/v1/jobs", { argv: ["true"], nodes: 2, tasks: 5, cwd: c.dir });
  expect(tooMany.status).toBe(400);
  expect(tooMany.json.error.field).toBe("tasks");
  expect(tooMany.json.error.message).toContain("at most 4 CPUs");
  const perNode = await c.api("POST", "/v1/jobs", { argv: ["true"], tasksPerNode: 3, cwd: c.dir });
  expect(perNode.status).toBe(400);
  expect(perNode.json.error.field).toBe("tasksPerNode");
  const cli = await c.ebb(["submit", "-N", "1", "-n", "3", "--wrap", "true"]);
  expect(cli.code).not.toBe(0);
  expect(cli.stderr).toContain("--overcommit");
  const over = await c.ebb(["submit", "-N", "1", "-n", "3", "--overcommit", "--parsable", "--wrap", "ebb run -O -n 3 true"]);
  expect(over.code).toBe(0);
  const job = await c.waitJob(Number(over.stdout.trim()), ["COMPLETED", "FAILED"]);
  expect(job.state).toBe("COMPLETED");
  const noNodes = await c.api("POST", "/v1/jobs", { argv: ["true"], tasks: 9, cwd: c.dir });
  expect(noNodes.status).toBe(400);
  expect(noNodes.json.error).toMatchObject({ field: "tasks", message: "9 tasks at a CPU each need 5 nodes of 2 CPUs, more than the cluster has (2); ask for fewer tasks, or --overcommit (API overcommit) to run more tasks than CPUs" });
  // Without a node count, overcommitted tasks ask for no more nodes than one (Slurm's -O -n 9):
  // more tasks than the cluster has CPUs was taken for 5 nodes of a 2-node cluster and refused.
  const nine = await c.submit({ argv: ["true"], tasks: 9, overcommit: true });
  const ran = await c.waitJob(nine, ["COMPLETED", "FAILED"]);
  expect({ state: ran.state, nodes: ran.allocation.length }).toEqual({ state: "COMPLETED", nodes: 1 });
  // A step inside a job is checked against the job's cores on its nodes (one, here).
  const alloc = await c.submit({ interactive: true, nodes: 1 });
  await c.waitJob(alloc, ["RUNNING"]);
  const step = await c.api("POST", `/v1/jobs/${alloc}/steps`, { argv: ["true"], tasks: 3, cwd: c.dir, envDigest: "0".repeat(64) });
  expect(step.status).toBe(400);
  expect(step.json.error.message).toContain("put 3 on node01, where the job holds 1 core");
  expect((await c.api("POST", `/v1/jobs/${alloc}/steps`, { argv: ["true"], tasks: 3, overcommit: true, cwd: c.dir, envDigest: "0".repeat(64) })).status).toBe(201);
  await c.api("DELETE", `/v1/jobs/${alloc}`);
});

test("a command job's tasks are checked against what each node can hold; --overcommit is kept with the job, across a controller restart", async () => {
  // A larger node: 4 + 2 CPUs pass the count of CPUs at submit, but 6 tasks on 2 nodes put 3 on
  // each, and only one node has 3 cores: no node pair could ever hold the job, so it is refused.
  c.startAgent("big", ["--cpus", "4"]);
  await c.waitNodes(3, "IDLE");
  const out = `${c.dir}/overfill.out`;
  const refused = await c.api("POST", "/v1/jobs", { argv: ["true"], nodes: 2, tasks: 6, output: out, cwd: c.dir });
  expect(refused.status).toBe(400);
  expect(refused.json.error).toEqual(expect.objectContaining({ field: "nodes", message: expect.stringContaining("only 1 node can hold one node's part of the job (3 tasks), it asks for 2") }));

  // The same job with --overcommit, held while the controller restarts: what it was allowed is in the database.
  const cmd = await c.submit({ argv: ["sh", "-c", "echo rank $EBB_PROCID"], nodes: 2, tasks: 6, overcommit: true, hold: true, output: out });
  c.controller.kill("SIGKILL");
  await c.controller.exited;
  await c.startController();
  await c.waitNodes(3, "IDLE");
  expect((await c.api("POST", `/v1/jobs/${cmd}/release`)).status).toBe(200);
  const ran = await c.waitJob(cmd, ["COMPLETED", "FAILED"]);
  expect({ state: ran.state, reason: ran.reason, overcommit: ran.overcommit }).toEqual({ state: "COMPLETED", reason: null, overcommit: true });
  expect((await c.ebb(["show", String(cmd)])).stdout).toMatch(/Tasks\s*:?\s*6 \(overcommit\)/);
  expect(readFileSync(out, "utf8").trim().split("\n").length).toBe(6);
}, 180_000);
