/**
 * Resizing running elastic jobs end to end: 4 agents as separate processes, Bun programs using
 * ebb/comm's adaptation window, resizes through the HTTP API and `ebb resize`.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pidAlive, ROOT, clusterForFile, waitFor } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";
import { holdEnd } from "../support/hold-end.ts";
import { Relay } from "../support/relay.ts";
import { compressHostlist } from "../../src/util/hostlist.ts";

const BUN = process.execPath;
const JACOBI = join(ROOT, "examples/jacobi.ts");
const COUNTER = join(import.meta.dir, "programs/counter.ts");

const c = clusterForFile({ agents: 4 });
const hold = holdEnd(() => c.dir);


/**
 * A running elastic job's `scontrol update JobId=ID NumNodes=N` is its resize, waited for as Slurm's
 * scontrol waits for a shrink, with Slurm's words and its slurm_job_ID_resize.sh; the adaptation.
 */
async function viaScontrol(id: number, nodes: number): Promise<any> {
  const r = await c.ebb(["scontrol", "update", `JobId=${id}`, `NumNodes=${nodes}`]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(r.stdout).toBe(`To reset Slurm environment variables, execute\n  For bash or sh shells:  . ./slurm_job_${id}_resize.sh\n  For csh shells:         source ./slurm_job_${id}_resize.csh\n`);
  const job = await c.job(id);
  const list = Bun.spawnSync(["bash", "-c", `. ./slurm_job_${id}_resize.sh && echo "$SLURM_NNODES $SLURM_JOB_NUM_NODES \${SLURM_NTASKS-unset}"`], { cwd: c.dir }).stdout.toString();
  expect(list).toBe(`${nodes} ${nodes} unset\n`);
  expect(c.read(`slurm_job_${id}_resize.sh`)).toContain(`export SLURM_JOB_NODELIST="${compressHostlist(job.allocation)}"\n`);
  return job.adaptations.at(-1);
}

describe("the Jacobi example resized while it runs", () => {
  test("2 -> 4 -> 3 -> 1 nodes: the final grid is bit for bit the fixed-size run's; history and processes match", async () => {
    const iters = ["--iters", "400"];
    const fixed = await c.ebb(["run", "-N", "1", "--", BUN, JACOBI, ...iters]);
    expect(fixed.code).toBe(0);
    const want = /checksum=(\w+) heat=(\S+)/.exec(fixed.stdout)!;

    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, JACOBI, ...iters, "--sleep", "3", "--every", "50", ...hold.args()], /iteration 50 on 2 ranks/);
    const sizes = [4, 3, 1];
    for (const n of sizes) {
      const a = n === 3 ? await viaScontrol(job.id, n) : await c.resize(job.id, n);
      expect({ state: a.state, message: a.message }).toEqual({ state: "COMMITTED", message: null }); // the message says why, if not
      expect(a.toNodes).toBe(n);
      // Every step of the protocol happened, in order.
      const t = a.times;
      expect(t.requested).toBeLessThanOrEqual(t.realloc);
      expect(t.realloc).toBeLessThanOrEqual(t.notified);
      expect(t.notified).toBeLessThanOrEqual(t.agreed);
      expect(t.agreed).toBeLessThanOrEqual(t.committed);
      expect(t.committed).toBeLessThanOrEqual(t.released);
      if (a.fromNodes < a.toNodes) expect(t.spawned).toBeLessThanOrEqual(t.ready);
    }
    hold.release();
    const { out, err, code } = await job.finished;
    expect(err).toBe("");
    expect(code).toBe(0);
    const got = /checksum=(\w+) heat=(\S+)/.exec(out)!;
    expect(got[1]).toBe(want[1]!);
    expect(got[2]).toBe(want[2]!);
    expect(out).toContain("now 4 ranks (was 2)");
    expect(out).toContain("now 3 ranks (was 4)");
    expect(out).toContain("now 1 ranks (was 3)");

    const detail = await c.job(job.id);
    expect(detail.state).toBe("COMPLETED");
    expect(detail.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.fromRanks, a.toRanks, a.state])).toEqual([
      [2, 4, 2, 4, "COMMITTED"],
      [4, 3, 4, 3, "COMMITTED"],
      [3, 1, 3, 1, "COMMITTED"],
    ]);
    // The allocation history holds the nodes each size had: 2, then 2 more, then back to 1.
    expect(new Set(detail.allocationHistory.map((h: any) => h.node)).size).toBe(4);
    expect(detail.events.filter((e: any) => e.kind === "resized")).toHaveLength(3);
    // Each "adapting" event names its adaptation.
    expect(detail.events.filter((e: any) => e.kind === "adapting").map((e: any) => e.data.adaptationId)).toEqual(detail.adaptations.map((a: any) => a.id));
    // Released nodes are free again, and no rank process is left over.
    await c.waitNodes(4, "IDLE");
    // Its ranks' command line ends with the test's own hold file: no other run's matches it.
    const left = Bun.spawnSync(["pgrep", "-f", `${JACOBI} ${iters.join(" ")} --sleep 3 --every 50 ${hold.args().join(" ")}$`]).stdout.toString().trim();
    expect(left).toBe("");
    const show = await c.ebb(["show", String(job.id)]);
    expect(show.stdout).toContain("Adaptations:");
    expect(show.stdout).toMatch(/2 -> 4 nodes\s+COMMITTED/);
  });
});

describe("an elastic command job", () => {
  test("grows: its joining ranks' credential covers the same environments, directory and output file as its first step's", async () => {
    const id = await c.submit({ argv: [BUN, JACOBI, "--iters", "400", "--sleep", "3", "--every", "50", ...hold.args()], nodes: 1, elastic: true, minNodes: 1, maxNodes: 2 });
    const job = await c.waitJob(id, ["RUNNING"], 60_000);
    await waitFor("iteration 50", () => c.read(job.output).includes("iteration 50 on 1 ranks"), 60_000);
    const a = await c.resize(id, 2);
    expect({ state: a.state, message: a.message }).toEqual({ state: "COMMITTED", message: null });
    hold.release();
    expect((await c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL"], 120_000)).state).toBe("COMPLETED");
    expect(c.read(job.output)).toContain("now 2 ranks (was 1)");
  }, 180_000);
});

describe("refused resizes", () => {
  test("each refusal is a 4xx naming what is wrong", async () => {
    const rigid = await c.submit({ argv: ["sleep", "30"], nodes: 1 });
    await c.waitJob(rigid, ["RUNNING"]);
    let r = await c.api("POST", `/v1/jobs/${rigid}/resize`, { nodes: 2 });
    expect([r.status, r.json.error.code]).toEqual([409, "not_elastic"]);

    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", BUN, COUNTER, "100000", "5"], /pid=\d+ rank=0/);
    r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
    expect([r.status, r.json.error.field]).toEqual([400, "nodes"]);
    expect(r.json.error.message).toContain("outside");
    r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
    expect([r.status, r.json.error.code]).toEqual([409, "no_change"]);
    r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: "two" });
    expect([r.status, r.json.error.field]).toEqual([400, "nodes"]);
    r = await c.api("POST", `/v1/jobs/999999/resize`, { nodes: 2 });
    expect(r.status).toBe(404);

    // A resize while one is under way.
    const first = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 2 });
    expect(first.status).toBe(202);
    r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
    expect([r.status, r.json.error.code]).toEqual([409, "job_adapting"]);
    await waitFor("the grow to commit", async () => (await c.job(job.id)).state === "RUNNING");

    // Back to 1 node with the CLI; then fill the other nodes: no idle node is left to grow into.
    const cli = await c.ebb(["resize", String(job.id), "--nodes", "1", "--wait"]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/resized from 2 to 1 nodes in \d+ ms/);
    // Each user resize is a plan of one item, recorded with its adaptation and carried out (done).
    const plans = (await c.api("GET", `/v1/plans?job=${job.id}&limit=100`)).json.plans as any[];
    const resizes = plans.filter((p) => p.items.some((i: any) => i.kind === "resize")).reverse();
    expect(resizes.map((p) => p.items.map((i: any) => [i.kind, i.status, i.from, i.to]))).toEqual([[["resize", "done", 1, 2]], [["resize", "done", 2, 1]]]);
    const filler = await c.submit({ argv: ["sleep", "30"], nodes: 2, exclusive: true });
    await c.waitJob(filler, ["RUNNING"]);
    r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 2 });
    expect([r.status, r.json.error.code]).toEqual([409, "no_idle_nodes"]);
    expect(r.json.error.message).toContain("needs 1 more node of its shape (whole nodes); fewer are free");

    for (const id of [rigid, filler, job.id]) await c.api("DELETE", `/v1/jobs/${id}`);
    await c.waitNodes(4, "IDLE");

    // An elastic job whose ranks never started an elastic step cannot be resized.
    writeFileSync(join(c.dir, "idle.sh"), "#!/bin/sh\nsleep 30\n");
    const idle = Number((await c.ebb(["submit", "--parsable", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "-N", "1", "idle.sh"])).stdout.trim());
    await c.waitJob(idle, ["RUNNING"]);
    r = await c.api("POST", `/v1/jobs/${idle}/resize`, { nodes: 2 });
    expect([r.status, r.json.error.code]).toEqual([409, "no_elastic_step"]);
    await c.api("DELETE", `/v1/jobs/${idle}`);
    // A pending job cannot be resized either.
    const hog = await c.submit({ argv: ["sleep", "30"], nodes: 4 });
    await c.waitJob(hog, ["RUNNING"]);
    const waiting = Number((await c.ebb(["submit", "--parsable", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "idle.sh"])).stdout.trim());
    r = await c.api("POST", `/v1/jobs/${waiting}/resize`, { nodes: 2 });
    expect([r.status, r.json.error.code]).toEqual([409, "job_not_running"]);
    for (const id of [hog, waiting]) await c.api("DELETE", `/v1/jobs/${id}`);
    await c.waitNodes(4, "IDLE");
  });
});

describe("a failed adaptation", () => {
  test("a grow the ranks cannot take fails; the job keeps its node and the added one is free again", async () => {
    // Ranks that never call initAdapt() have no business cards for a new world.
    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", "sh", "-c", "echo ready; exec sleep 60"], /ready/);
    const a = await c.resize(job.id, 2);
    expect(a.state).toBe("FAILED");
    expect(a.message).toContain("initAdapt");
    const after = await c.job(job.id);
    expect([after.state, after.nodes]).toEqual(["RUNNING", 1]);
    expect(after.events.map((e: any) => e.kind)).toContain("resize-failed");
    await c.waitNodes(3, "IDLE");
    // The node went back: a 3-node job starts beside the elastic one.
    const other = await c.submit({ argv: ["true"], nodes: 3 });
    expect((await c.waitJob(other, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    await c.api("DELETE", `/v1/jobs/${job.id}`);
  });
});

describe("a program that ends with a grow under way", () => {
  test("once every rank of the world has exited, the grow is aborted and its joining ranks go: the job ends instead of waiting for a window", async () => {
    const stop = join(c.dir, "stop-unprobed");
    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", BUN, join(import.meta.dir, "programs/ends-unprobed.ts"), stop], /rank=0 status=new/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 2 });
    expect(r.status).toBe(202);
    await waitFor("the joining rank to start", () => /status=joining/.test(job.output()));
    writeFileSync(stop, "");
    const end = await waitFor("ebb run to end", () => Promise.race([job.finished, Bun.sleep(200).then(() => undefined)]), 60_000);
    expect(end.code).toBe(0);
    expect(end.err).toContain("the adaptation these ranks joined was aborted");
    const after = await c.waitJob(job.id, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"]);
    expect(after.state).toBe("COMPLETED");
    expect(after.adaptations.map((a: any) => a.state)).not.toContain("COMMITTED");
    await c.waitNodes(4, "IDLE");
  });
});

describe("timing samples", () => {
  test("ranks report loop and comm time; the job shows its MTCT per window", async () => {
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--sample-interval", "0.5", "--", BUN, COUNTER, "100000", "5"], /pid=\d+ rank=1/);
    const detail = await waitFor("three sampling windows", async () => {
      const j = await c.job(job.id);
      return j.samples.length >= 3 && j.mtct !== null ? j : undefined;
    });
    expect(detail.sampleInterval).toBe(0.5);
    for (const s of detail.samples) {
      expect(s.iterations).toBeGreaterThan(0);
      expect(s.mtct).toBeGreaterThan(0);
    }
    // After the first window (whose first allreduce waits for the slower rank to start):
    for (const s of detail.samples.slice(1)) {
      // 5 ms of sleep per iteration against one small allreduce: communication is the small part.
      expect(s.mtct).toBeLessThan(1);
    }
    const listed = (await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs.find((j: any) => j.id === job.id);
    expect(listed.mtct).toBeGreaterThan(0);
    expect((await c.ebb(["show", String(job.id)])).stdout).toMatch(/MTCT\s+0\.\d+/);
    await c.api("DELETE", `/v1/jobs/${job.id}`);
    await job.finished;
  });
});

describe("a rank dying in the middle of a resize", () => {
  test("the resize is aborted, its joining rank is gone, the survivor goes on in a fault adaptation, and the cluster carries on", async () => {
    // 300 ms per iteration: the grow waits for the ranks to reach its target, so the kill lands inside it.
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", BUN, COUNTER, "100000", "300"], /pid=\d+ rank=1/);
    // The two ranks' lines come from two nodes, in either order.
    const pids = await waitFor("both ranks' pids", () => {
      const seen = [...job.output().matchAll(/pid=(\d+) rank=(\d+)/g)].map((m) => ({ pid: Number(m[1]), rank: Number(m[2]) }));
      return [0, 1].every((r) => seen.some((p) => p.rank === r)) ? seen : undefined;
    });
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
    expect(r.status).toBe(202);
    await waitFor("the joining rank to start", () => /status=joining/.test(job.output()));
    const joiner = Number(/pid=(\d+) rank=\d+ status=joining/.exec(job.output())![1]);
    const victim = pids.find((p) => p.rank === 1)!.pid;
    process.kill(victim, "SIGKILL");
    // Its agent reports the ranks of its node dead: the grow is aborted and a fault adaptation 2 -> 1 follows.
    const detail = await waitFor("the fault adaptation to commit", async () => {
      const j = await c.job(job.id);
      return j.adaptations[1]?.state === "COMMITTED" ? j : undefined;
    }, 60_000);
    expect(detail.state).toBe("RUNNING");
    expect(detail.adaptations.map((a: any) => a.state)).toEqual(["FAILED", "COMMITTED"]);
    expect(detail.adaptations[0].message).toContain("aborted");
    expect([detail.adaptations[1].fromNodes, detail.adaptations[1].toNodes]).toEqual([2, 1]);
    await waitFor("rank 0 to go on in a world of 1", () => /world size=1 at=\d+ staying=1 leaving=0 joining=0/.test(job.output()));
    await waitFor("the killed rank and the joining one to be gone", () => [victim, joiner].every((p) => !pidAlive(p)));
    expect(pidAlive(pids.find((p) => p.rank === 0)!.pid)).toBe(true);
    await c.api("DELETE", `/v1/jobs/${job.id}`);
    await job.finished;
    await waitFor("every rank to be gone", () => pids.every((p) => !pidAlive(p.pid)));
    await c.waitNodes(4, "IDLE");
    const after = await c.ebb(["run", "-N", "4", "hostname"]);
    expect(after.code).toBe(0);
  });
});

describe("a controller restart", () => {
  test("a running elastic job can still be grown and shrunk once its launcher re-attached", async () => {
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", BUN, COUNTER, "100000", "20"], /pid=\d+ rank=1/);
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    // A grow needs idle nodes, and nodes count only once their agents have re-registered.
    await c.waitNodes(2, "IDLE");
    // The launcher reconnects by itself; until it has, the job has no elastic step to resize.
    const grow = await waitFor("the launcher to re-attach", async () => {
      const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 3 });
      if (r.status === 409 && r.json.error.code === "no_elastic_step") return undefined;
      return r;
    });
    expect(grow.status).toBe(202);
    expect((await c.adaptationEnd(job.id, grow.json.adaptationId)).state).toBe("COMMITTED");
    await waitFor("rank 0 to see the world of 3", () => /world size=3/.test(job.output()));
    const shrunk = await c.resize(job.id, 1);
    expect(shrunk.state).toBe("COMMITTED");
    const detail = await c.job(job.id);
    expect(detail.allocation).toHaveLength(1);
    expect(detail.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.state])).toEqual([
      [2, 3, "COMMITTED"],
      [3, 1, "COMMITTED"],
    ]);
    await waitFor("rank 0 to see the world of 1", () => /world size=1/.test(job.output()));
    await c.api("DELETE", `/v1/jobs/${job.id}`);
    await job.finished;
  });

  test("an adaptation that ended while the controller was stopped, its report lost with it: the launcher says it again to the restarted controller", async () => {
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", BUN, COUNTER, "100000", "20"], /pid=\d+ rank=1/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
    expect(r.status).toBe(202);
    // The launcher has the order; the shrink goes on without the controller, whose socket takes its
    // commit and end unread, and they die with it.
    c.controller.kill("SIGSTOP");
    try {
      await waitFor("rank 0 to see the world of 1", () => /world size=1/.test(job.output()));
      await Bun.sleep(500);
    } finally {
      c.controller.kill("SIGKILL");
    }
    await c.controller.exited;
    await c.startController();
    // Its adapt timeout is the default 10 minutes: only the launcher's report ends the adaptation here.
    const a = await c.adaptationEnd(job.id, r.json.adaptationId);
    expect(a.state).toBe("COMMITTED");
    expect((await c.job(job.id)).allocation).toHaveLength(1);
    await c.api("DELETE", `/v1/jobs/${job.id}`);
    await job.finished;
  });

  test("an order lost on its way (the launcher's connection broke with it in flight): the re-attach says so, the resize fails at once and the job goes on", async () => {
    // The launcher reaches the controller through a relay that loses what the test says.
    const relay = new Relay(c.port);
    try {
      const job = await elasticRun(c, ["--controller", relay.url, "-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", BUN, COUNTER, "100000", "20"], /pid=\d+ rank=1/);
      relay.drop = true;
      const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
      expect(r.status).toBe(202);
      await Bun.sleep(300);
      relay.cut();
      relay.drop = false;
      // The cluster's adapt timeout is the default 10 minutes: only the re-attach ends it here.
      const a = await c.adaptationEnd(job.id, r.json.adaptationId);
      expect(a.state).toBe("FAILED");
      expect(a.message).toMatch(/never reached the job's launcher .* goes on with its 2 nodes/);
      expect((await c.job(job.id)).allocation).toHaveLength(2);
      // The job took no harm: the same resize, ordered again, commits.
      expect((await c.resize(job.id, 1)).state).toBe("COMMITTED");
      await waitFor("rank 0 to see the world of 1", () => /world size=1/.test(job.output()));
      expect(job.output().match(/world size=1/g)).toHaveLength(1);
      await c.api("DELETE", `/v1/jobs/${job.id}`);
      await job.finished;
    } finally {
      relay.stop();
    }
  });

  test("an elastic command job's step root (on the controller's host) lives through it, re-attaches, and the job is grown and COMPLETED", async () => {
    const id = await c.submit({ argv: [BUN, COUNTER, "400", "20"], nodes: 2, elastic: true, minNodes: 1, maxNodes: 3 });
    const job = await c.waitJob(id, ["RUNNING"], 60_000);
    await waitFor("both ranks", () => /pid=\d+ rank=1/.test(c.read(job.output)), 60_000);
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    await c.waitNodes(2, "IDLE");
    const grow = await waitFor("the step root to re-attach", async () => {
      const r = await c.api("POST", `/v1/jobs/${id}/resize`, { nodes: 3 });
      if (r.status === 409 && r.json.error.code === "no_elastic_step") return undefined;
      return r;
    });
    expect(grow.status).toBe(202);
    expect((await c.adaptationEnd(id, grow.json.adaptationId)).state).toBe("COMMITTED");
    const end = await c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"], 60_000);
    expect(end.state).toBe("COMPLETED");
    expect(c.read(job.output)).toMatch(/world size=3/);
  }, 120_000);
});

