/**
 * The /v1/launcher WebSocket at the wire level, against a real controller and agents: what
 * `ebb run` does on its one connection (submit, follow, step.create, release) and how requests
 * that fail are answered without closing it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";
import { VERSION } from "../../src/util/version.ts";
import { freePort, outputOf, startCluster, TestCluster, waitFor } from "../support/cluster.ts";

type Msg = Record<string, any>;

/** A raw launcher connection that records every message it gets. */
class Wire {
  readonly got: Msg[] = [];
  private readonly ws: WebSocket;
  readonly opened: Promise<void>;

  constructor(c: TestCluster, token: string) {
    this.ws = new WebSocket(`${c.url.replace("http", "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
    this.ws.onmessage = (ev) => this.got.push(JSON.parse(String(ev.data)));
    this.opened = new Promise((resolve, reject) => {
      this.ws.onopen = () => {
        // Every connection opens with the launcher's hello (docs/adaptation.md §10).
        this.send({ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION });
        resolve();
      };
      this.ws.onerror = () => reject(new Error("the launcher socket did not open"));
    });
  }

  send(msg: Msg): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** The first message received so far, or from now on, that matches. */
  next(what: string, match: (m: Msg) => boolean): Promise<Msg> {
    return waitFor(what, () => this.got.find(match), 10_000);
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  close(): void {
    this.ws.close();
  }
}

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});

describe("/v1/launcher", () => {
  /** What a step request must say for its credential: the ranks' working directory and the digest of their environment. */
  const covers = { cwd: "/", envDigest: "0".repeat(64) };

  test("one connection submits a job, follows it to RUNNING, gets a step grant and gives the job back", async () => {
    const w = new Wire(c, c.token);
    await w.opened;
    w.send({ t: "submit", job: { interactive: true, nodes: 2, tasks: 4, name: "wire", cwd: c.dir } });
    const { jobId } = await w.next("submitted", (m) => m.t === "submitted");
    const running = await w.next("RUNNING", (m) => m.t === "job.state" && m.state === "RUNNING");
    expect(running.jobId).toBe(jobId);
    expect(running.nodes).toHaveLength(2);
    w.send({ t: "step.create", jobId, req: 7, step: { argv: ["true"], tasks: 4, ...covers } });
    const { grant } = await w.next("the grant", (m) => m.t === "step.grant" && m.req === 7);
    expect(grant.jobId).toBe(jobId);
    expect(grant.nodes.map((n: Msg) => n.name)).toEqual(running.nodes);
    expect(grant.tasks).toEqual([2, 2]);
    expect(grant.cred.sig).toMatch(/^[0-9a-f]{64}$/);
    expect((await c.job(jobId)).steps).toHaveLength(1);
    w.send({ t: "release", jobId, exitCode: 0 });
    await w.next("COMPLETED", (m) => m.t === "job.state" && m.state === "COMPLETED");
    const job = await c.job(jobId);
    expect(job.state).toBe("COMPLETED");
    expect(job.name).toBe("wire");
    w.close();
  });

  test("a request that fails is answered with what the HTTP API would say, its req and its field; the connection stays", async () => {
    const w = new Wire(c, c.token);
    await w.opened;
    w.send({ t: "submit", job: { interactive: true, nodes: 99 } });
    const tooBig = await w.next("the refusal", (m) => m.t === "error");
    expect(tooBig).toMatchObject({ code: "invalid_request", field: "nodes" });
    expect(tooBig.message).toContain("99 nodes requested but the cluster has 2");
    w.send({ t: "submit", job: { interactive: true, tasks: "many" } });
    const malformed = await w.next("the second refusal", (m) => m.t === "error" && m !== tooBig);
    expect(malformed.message).toContain("job.tasks");
    // Still open: the next submit works, and a step too large for the job names its request.
    w.send({ t: "submit", job: { interactive: true, nodes: 1, cwd: c.dir } });
    const { jobId } = await w.next("submitted", (m) => m.t === "submitted");
    await w.next("RUNNING", (m) => m.t === "job.state" && m.state === "RUNNING");
    w.send({ t: "step.create", jobId, req: 3, step: { argv: ["true"], nodes: 2, ...covers } });
    const refused = await w.next("the step refusal", (m) => m.t === "error" && m.req === 3);
    expect(refused).toMatchObject({ field: "nodes" });
    expect(refused.message).toContain("asks for 2 nodes but job");
    expect(w.open).toBe(true);
    w.send({ t: "release", jobId, exitCode: 0 });
    await w.next("COMPLETED", (m) => m.t === "job.state" && m.state === "COMPLETED");
    w.close();
  });

  test("a job's token creates steps of its job only, and submits jobs recorded as that job's", async () => {
    const id = await c.submit({ argv: ["sh", "-c", "echo token=$EBB_TOKEN; exec sleep 60"], nodes: 1 });
    const job = await c.waitJob(id, ["RUNNING"]);
    const token = await waitFor("the job's token", () => /token=(\S+)/.exec(c.read(job.output))?.[1]);
    const w = new Wire(c, token);
    await w.opened;
    w.send({ t: "submit", job: { interactive: true, nodes: 1 } });
    const { jobId: child } = await w.next("the child job", (m) => m.t === "submitted");
    expect((await c.job(child)).submittedBy).toBe(id);
    await c.api("DELETE", `/v1/jobs/${child}`);
    w.send({ t: "step.create", jobId: id + 1000, req: 1, step: { argv: ["true"], ...covers } });
    expect(await w.next("the refusal of another job", (m) => m.t === "error" && m.req === 1)).toMatchObject({ code: "forbidden", message: `this token is for job ${id}, not job ${id + 1000} (a job's token acts on its job and the jobs it submitted)` });
    w.send({ t: "step.create", jobId: id, req: 2, step: { argv: ["true"], ...covers } });
    const { grant } = await w.next("the grant", (m) => m.t === "step.grant" && m.req === 2);
    expect(grant).toMatchObject({ jobId: id, stepId: 1 });
    w.close();
    await c.api("DELETE", `/v1/jobs/${id}`);
  });

  test("a user's token is refused another's job with the words the HTTP API uses", async () => {
    const made = await c.api("POST", "/v1/tokens", { user: "ebbt_wire" });
    expect(made.status).toBe(201);
    const id = await c.submit({ interactive: true, nodes: 1 });
    const w = new Wire(c, made.json.token);
    await w.opened;
    w.send({ t: "step.create", jobId: id, req: 7, step: { argv: ["true"], ...covers } });
    const refused = await w.next("the refusal", (m) => m.t === "error" && m.req === 7);
    const http = await c.api("POST", `/v1/jobs/${id}/hold`, undefined, made.json.token);
    expect({ code: refused.code, message: refused.message }).toEqual({ code: "forbidden", message: `job ${id} is not ebbt_wire's; a user's token acts on that user's jobs only` });
    expect(http.json.error.message).toBe(refused.message);
    w.close();
    await c.api("DELETE", `/v1/jobs/${id}`);
  });
});

describe("ebb run while the cluster is busy", () => {
  const busy = async () => {
    const id = await c.submit({ argv: ["sleep", "30"], nodes: 2, exclusive: true });
    await c.waitJob(id, ["RUNNING"]);
    return id;
  };
  const pendingRun = () => waitFor("the run's job to queue", async () => (await c.api("GET", "/v1/jobs?state=PENDING")).json.jobs[0]);

  test("a run that must wait says so, runs once a node is free, and says where", async () => {
    const blocker = await busy();
    const run = c.ebbSpawn(["run", "-N", "1", "sh", "-c", "echo ran on $EBB_NODENAME"]);
    const job = await pendingRun();
    await waitFor("the progress line", async () => (await c.job(job.id)).state === "PENDING" && Date.now() - Date.parse(job.submitTime) > 1200);
    await c.api("DELETE", `/v1/jobs/${blocker}`);
    const r = await outputOf(run);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ran on node0[12]\n$/);
    expect(r.stderr).toContain(`ebb: job ${job.id} queued and waiting for resources`);
    expect(r.stderr).toMatch(new RegExp(`ebb: job ${job.id} has been allocated node0[12]`));
    expect((await c.job(job.id)).state).toBe("COMPLETED");
  });

  test("Ctrl-C while it waits cancels its job", async () => {
    const blocker = await busy();
    const run = c.ebbSpawn(["run", "-N", "1", "true"]);
    const job = await pendingRun();
    run.kill("SIGINT");
    // Right after the controller made the job, maybe before ebb run heard of it: still a clean cancel.
    const r = await outputOf(run);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(`job ${job.id} cancelled while waiting`);
    expect((await c.job(job.id)).state).toBe("CANCELLED");
    await c.api("DELETE", `/v1/jobs/${blocker}`);
  });
});

describe("ebb run's errors from its connection", () => {
  test("a request the controller refuses: one line naming the field, exit 1", async () => {
    const r = await c.ebb(["run", "-N", "5", "true"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("ebb run: 5 nodes requested but the cluster has 2");
    expect(r.stderr).toContain("(field: nodes)");
  });

  test("no controller: it says where it looked and what to do", async () => {
    const r = await c.ebb(["run", "true"], { env: { EBB_CONTROLLER: `http://127.0.0.1:${await freePort()}` } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot reach the controller at http://127.0.0.1:");
    expect(r.stderr).toContain("ebb up");
  });
});
