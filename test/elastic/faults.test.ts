/**
 * Fault adaptation (dissertation §6.1.2): an elastic job whose node dies goes on with the
 * survivors when they are within its range; a rigid job, or one whose survivors are below its
 * minimum, ends NODE_FAIL. Real processes: 5 agents, `ebb run` (and elastic command jobs) of examples/jacobi.ts, agents
 * SIGKILLed mid-run.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rankPids, ROOT, waitFor, type TestCluster, startCluster } from "../support/cluster.ts";
import { Relay } from "../support/relay.ts";
import { elasticRun } from "../support/elastic-run.ts";
import { holdEnd } from "../support/hold-end.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";
import { VERSION } from "../../src/util/version.ts";

const BUN = process.execPath;
const JACOBI = join(ROOT, "examples/jacobi.ts");
const ITERS = ["--iters", "400", "--checkpoint", "10"];

let c: TestCluster;
let want: RegExpExecArray;
beforeAll(async () => {
  c = await startCluster({ agents: 5, heartbeat: 1 });
  const fixed = await c.ebb(["run", "-N", "1", "--", BUN, JACOBI, ...ITERS]);
  expect(fixed.code).toBe(0);
  want = /checksum=(\w+) heat=(\S+)/.exec(fixed.stdout)!;
});
afterAll(async () => {
  await c?.stop();
});

/**
 * The test's Jacobi: the answer depends on --iters and the shape only. --sleep paces it so that the
 * test's fault comes mid-run; the run holds before its answer (test/support/hold-end.ts) until the
 * test releases it once done with it.
 */
const hold = holdEnd(() => c.dir);
const jacobi = () => [BUN, JACOBI, ...ITERS, "--sleep", "3", "--every", "50", ...hold.args()];
const release = hold.release;

/** Every node IDLE again: a killed agent is restarted under its name. */
beforeEach(async () => {
  for (const [name, a] of c.agents) if (a.exitCode !== null || a.signalCode !== null) c.startAgent(name);
  await c.waitNodes(5, "IDLE");
});

async function kill(node: string): Promise<void> {
  const agent = c.agents.get(node)!;
  agent.kill("SIGKILL");
  await agent.exited;
}

/** `ebb run` exited 0 with the fixed-size answer, its output says what was restored, and the job COMPLETED. */
async function expectRightAnswer(job: Awaited<ReturnType<typeof elasticRun>>, lost: RegExp) {
  const { out, err, code } = await job.finished;
  const got = /checksum=(\w+) heat=(\S+)/.exec(out);
  if (code !== 0) console.log(`ebb run: ${code}\n${out}\n${err}\n${c.daemonLogs().slice(-6000)}`);
  expect(code).toBe(0);
  expect(out).toMatch(lost);
  expect(got?.[1]).toBe(want[1]!);
  expect(got?.[2]).toBe(want[2]!);
  const end = await c.job(job.id);
  expect(end.state).toBe("COMPLETED");
  return { out, err, end };
}

/**
 * The job survived one fault adaptation that removed `removed` (from -> to nodes, a rank per node):
 * `ebb run` exits 0 with the fixed-size answer, Jacobi says what it restored, the job COMPLETED.
 */
async function expectRecovered(job: Awaited<ReturnType<typeof elasticRun>>, lost: RegExp, from: number, to: number, removed: string[]): Promise<string> {
  const { err, end } = await expectRightAnswer(job, lost);
  expect(end.adaptations.length).toBe(1);
  const fault = end.adaptations[0];
  expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state]).toEqual([from, to, from, to, "COMMITTED"]);
  expect([...fault.removed].sort()).toEqual([...removed].sort());
  return err;
}

describe("an elastic Jacobi run loses one of its 3 nodes", () => {
  // The first, a middle and the last node of the allocation (ebb run's allocation: the launcher is
  // not on a node, so any of them may go).
  const tried: string[] = [];
  const survived: string[] = [];
  afterAll(() => console.log(`faults survived: ${survived.length} of ${tried.length} (${tried.join(", ")})`));

  for (const victimIndex of [1, 2, 0]) {
    test(`node ${victimIndex} of the allocation SIGKILLed mid-run: the job goes on with the survivors and gets the fixed-size answer`, async () => {
      const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", "--", ...jacobi()], /iteration 100 on 3 ranks/);
      const detail = await c.job(job.id);
      const victim = detail.allocation[victimIndex] as string;
      tried.push(`allocation[${victimIndex}]`);
      await kill(victim);
      if (victimIndex === 1) {
        // Once the survivors go on, the job can grow back onto a healthy node (renumbered ranks and all).
        await waitFor("the fault adaptation to commit", async () => (await c.job(job.id)).adaptations[0]?.state === "COMMITTED", 60_000);
        const grown = await c.resize(job.id, 3);
        expect(grown.state).toBe("COMMITTED");
        expect(grown.added).not.toContain(victim);
      }
      release();

      const { out, err, code } = await job.finished;
      const got = /checksum=(\w+) heat=(\S+)/.exec(out);
      const end = await c.job(job.id);
      const fault = end.adaptations[0];
      if (code !== 0) console.log(`ebb run: ${code}\n${out}\n${err}\n${c.daemonLogs().slice(-6000)}`);
      expect(code).toBe(0);
      expect(out).toMatch(/jacobi: fault: lost rank \d at iteration \d+; restored iteration \d+ on 2 ranks \(was 3\)/);
      expect(got?.[1]).toBe(want[1]!);
      expect(got?.[2]).toBe(want[2]!);
      expect(end.state).toBe("COMPLETED");
      // The first adaptation is the fault's: 3 -> 2 nodes, committed, the dead node removed.
      expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state]).toEqual([3, 2, 3, 2, "COMMITTED"]);
      expect(fault.removed).toEqual([victim]);
      expect(end.events.some((e: any) => e.kind === "fault" && e.message.includes(`node ${victim} failed`))).toBe(true);
      expect(err).toContain(`lost node ${victim}`);
      if (victimIndex === 1) expect(out).toContain("now 3 ranks (was 2)");
      survived.push(`allocation[${victimIndex}]`);
    }, 120_000);
  }
});

describe("a fault's order lost on its way", () => {
  test("the launcher's connection broke with the fault realloc in flight: the re-attached launcher gets it again, 3 -> 2, the right answer", async () => {
    // The launcher reaches the controller through a relay that loses what the test says.
    const relay = new Relay(c.port);
    try {
      const job = await elasticRun(c, ["--controller", relay.url, "-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", "--", ...jacobi()], /iteration 100 on 3 ranks/);
      const victim = (await c.job(job.id)).allocation[1] as string;
      relay.drop = true;
      await kill(victim);
      await waitFor("the fault adaptation to be ordered", async () => (await c.job(job.id)).adaptations[0]?.state === "ADAPTING", 60_000);
      await Bun.sleep(300);
      relay.cut();
      relay.drop = false;
      release();
      // The cluster's adapt timeout is the default 10 minutes: without the order sent again, the job would wait for it.
      await expectRecovered(job, /jacobi: fault: lost rank \d at iteration \d+; restored iteration \d+ on 2 ranks \(was 3\)/, 3, 2, [victim]);
    } finally {
      relay.stop();
    }
  }, 120_000);
});

describe("two nodes lost at once", () => {
  test("agents of 2 of 4 nodes SIGKILLed together: one fault adaptation 4 -> 2 names both, the right answer", async () => {
    const job = await elasticRun(c, ["-N", "4", "--elastic", "--min-nodes", "2", "--max-nodes", "4", "--", ...jacobi()], /iteration 100 on 4 ranks/);
    const alloc = (await c.job(job.id)).allocation as string[];
    // Ranks 1 and 3: their buddies (2 and 0) survive, so Jacobi can restore both.
    const victims = [alloc[1]!, alloc[3]!];
    const agents = victims.map((v) => c.agents.get(v)!);
    for (const a of agents) a.kill("SIGKILL");
    await Promise.all(agents.map((a) => a.exited));
    release();
    await expectRecovered(job, /jacobi: fault: lost ranks 1,3 at iteration \d+; restored iteration \d+ on 2 ranks \(was 4\)/, 4, 2, victims);
  }, 120_000);
});

describe("an inner node of the launch tree", () => {
  test("fan-out 2, 5 nodes: the agent of allocation[1] (parent of allocation[4]) SIGKILLed: the launcher adopts allocation[4], whose rank goes on: 5 -> 4", async () => {
    const job = await elasticRun(c, ["-N", "5", "--fanout", "2", "--elastic", "--min-nodes", "2", "--max-nodes", "5", "--", ...jacobi()], /iteration 100 on 5 ranks/);
    const alloc = (await c.job(job.id)).allocation as string[];
    // Tree: launcher -> allocation[0], [1]; [0] -> [2], [3]; [1] -> [4]. Rank 1 is lost (its buddy 2
    // survives); rank 4's process lives through it.
    expect(ranksOn(alloc[4]!).length).toBe(1);
    await kill(alloc[1]!);
    release();
    const err = await expectRecovered(job, /jacobi: fault: lost rank 1 at iteration \d+; restored iteration \d+ on 4 ranks \(was 5\)/, 5, 4, [alloc[1]!]);
    expect(err).toContain(`adopting ${alloc[4]} below it in the launch tree`);
    // No rank is started in a fault adaptation: 4 ranks after it means rank 4's process lived.
    const end = await c.job(job.id);
    expect(end.events.filter((e: any) => e.kind === "fault").length).toBe(1);
  }, 120_000);
});

describe("a fault during a resize (agreed, not committed)", () => {
  /**
   * Jacobi on 3 nodes is resized to `to`; its ranks hold in the window (agreed, not committed) until
   * a file exists. The agent of allocation[victimIndex] is SIGKILLed there: the resize is aborted
   * and one fault adaptation 3 -> 2 on the world before it follows, with the right answer.
   */
  async function faultInResize(to: number, victimIndex: number, lost: RegExp, inWindow = true): Promise<void> {
    const hold = join(c.dir, `hold-${to}-${victimIndex}-${Date.now()}`);
    if (!inWindow) writeFileSync(hold, "");
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "4", "--", ...jacobi(), "--hold-window", hold], /iteration 100 on 3 ranks/);
    const alloc = (await c.job(job.id)).allocation as string[];
    const victim = alloc[victimIndex]!;
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: to });
    expect(r.status).toBe(202);
    if (inWindow) await waitFor("the ranks to hold in the resize window", () => /in the window \(3 -> \d ranks\)/.test(job.output()), 60_000);
    await kill(victim);
    writeFileSync(hold, "");
    release();
    const { err, end } = await expectRightAnswer(job, lost);
    const [resize, fault] = end.adaptations;
    expect([resize.fromNodes, resize.toNodes, resize.state]).toEqual([3, to, "FAILED"]);
    expect(resize.message).toContain(`aborted: node ${victim} failed`);
    expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state]).toEqual([3, 2, 3, 2, "COMMITTED"]);
    expect(fault.removed).toEqual([victim]);
    expect(end.adaptations.length).toBe(2);
    expect(err).toContain("the resize is aborted");
  }

  test("a grow 3 -> 4 in its window: the agent of allocation[1] SIGKILLed -> the grow is aborted, fault adaptation 3 -> 2", async () => {
    await faultInResize(4, 1, /jacobi: fault: lost rank 1 at iteration \d+; restored iteration \d+ on 2 ranks \(was 3\)/);
  }, 120_000);

  test("a grow 3 -> 4 whose joining ranks are starting: the agent of allocation[2] SIGKILLed -> the grow is aborted, fault adaptation 3 -> 2", async () => {
    // Killed as soon as the resize is accepted: the joining step is still being started (or, on a
    // fast machine, the window is open already; either way the grow has not committed).
    await faultInResize(4, 2, /jacobi: fault: lost rank 2 at iteration \d+; restored iteration \d+ on 2 ranks \(was 3\)/, false);
  }, 120_000);

  test("a grow 3 -> 4 in its window: the added node's agent SIGKILLed -> the grow is aborted, a fault adaptation 3 -> 3 that removes nothing voids its window, the right answer", async () => {
    const hold = join(c.dir, `hold-added-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "4", "--", ...jacobi(), "--hold-window", hold], /iteration 100 on 3 ranks/);
    const before = (await c.job(job.id)).allocation as string[];
    expect((await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 4 })).status).toBe(202);
    await waitFor("the ranks to hold in the resize window", () => /in the window \(3 -> 4 ranks\)/.test(job.output()), 60_000);
    const added = ((await c.job(job.id)).allocation as string[]).find((n) => !before.includes(n))!;
    await kill(added);
    writeFileSync(hold, "");
    release();
    const { err, end } = await expectRightAnswer(job, /jacobi: fault: lost no rank at iteration \d+; restored iteration \d+ on 3 ranks \(was 3\)/);
    const [grow, fault] = end.adaptations;
    expect([grow.fromNodes, grow.toNodes, grow.state]).toEqual([3, 4, "FAILED"]);
    expect(grow.message).toContain(`aborted: node ${added} failed`);
    expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state, fault.removed]).toEqual([3, 3, 3, 3, "COMMITTED", []]);
    expect(end.adaptations.length).toBe(2);
    expect(end.allocation).toEqual(before);
    expect(err).toContain("the resize is aborted");
  }, 180_000);

  test("a swap off an owner's node (issue 34) in its window: the node it adds SIGKILLed -> the swap is aborted, a fault adaptation 3 -> 3 voids its window; the job moves again and gets the right answer", async () => {
    const hold = join(c.dir, `hold-swap-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", "--", ...jacobi(), "--hold-window", hold], /iteration 100 on 3 ranks/);
    const before = (await c.job(job.id)).allocation as string[];
    const owned = before[2]!; // its last node: the move is one swap
    try {
      expect((await c.ebb(["drain", "--owner", owned])).code).toBe(0);
      await waitFor("the ranks to hold in the swap's window", () => /in the window \(3 -> 3 ranks\)/.test(job.output()), 60_000);
      const added = ((await c.job(job.id)).allocation as string[]).find((n) => !before.includes(n))!;
      await kill(added);
      writeFileSync(hold, "");
      // Released once the move after the fault's has ended: a run released earlier could end before it.
      await waitFor("the move after the fault adaptation to end", async () => ["COMMITTED", "FAILED"].includes((await c.job(job.id)).adaptations[2]?.state), 60_000);
      release();
      const { end } = await expectRightAnswer(job, /jacobi: fault: lost no rank at iteration \d+; restored iteration \d+ on 3 ranks \(was 3\)/);
      const [swap, fault] = end.adaptations;
      expect([swap.added, swap.removed, swap.state]).toEqual([[added], [owned], "FAILED"]);
      expect(swap.message).toContain(`aborted: node ${added} failed`);
      expect([fault.fromNodes, fault.toNodes, fault.state, fault.removed]).toEqual([3, 3, "COMMITTED", []]);
      // The owner's node is left by a later move, onto the other free node.
      expect(end.adaptations.slice(2).map((a: any) => [a.removed, a.state])).toEqual([[[owned], "COMMITTED"]]);
      expect(end.allocation).not.toContain(owned);
    } finally {
      await c.ebb(["resume", owned]);
    }
  }, 180_000);

  test("a shrink 3 -> 2 in its window: the agent of allocation[0] (staying) SIGKILLed -> the shrink is aborted, fault adaptation 3 -> 2", async () => {
    await faultInResize(2, 0, /jacobi: fault: lost rank 0 at iteration \d+; restored iteration \d+ on 2 ranks \(was 3\)/);
  }, 120_000);
});

describe("a fault after a resize committed, before its launcher reported it", () => {
  test("a shrink 3 -> 2 whose leaving rank holds after its commit: the agent of a staying node SIGKILLed -> the shrink stands (COMMITTED), then a fault adaptation 2 -> 1 of the new world, the right answer", async () => {
    const hold = join(c.dir, `hold-leave-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", ...jacobi(), "--hold-leave", hold], /iteration 100 on 3 ranks/);
    const before = (await c.job(job.id)).allocation as string[];
    expect((await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 2 })).status).toBe(202);
    // Every rank committed; the launcher reports the shrink only once its leaving rank is gone.
    await waitFor("the leaving rank to hold after the commit", () => /rank 2 left at iteration \d+, holding/.test(job.output()), 60_000);
    const victim = before[1]!;
    await kill(victim);
    // The controller has seen the node go; the launcher's report of the shrink is still to come.
    await waitFor("the controller to see the node gone", async () => (await c.api("GET", "/v1/nodes")).json.nodes.some((n: any) => n.name === victim && n.state === "DOWN"), 30_000);
    writeFileSync(hold, "");
    release();
    const { end } = await expectRightAnswer(job, /jacobi: fault: lost rank 1 at iteration \d+; restored iteration \d+ on 1 ranks \(was 2\)/);
    const [shrink, fault] = end.adaptations;
    expect([shrink.fromNodes, shrink.toNodes, shrink.state]).toEqual([3, 2, "COMMITTED"]);
    expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state, fault.removed]).toEqual([2, 1, 2, 1, "COMMITTED", [victim]]);
    expect(end.adaptations.length).toBe(2);
    expect(end.allocation).toEqual([before[0]]);
  }, 180_000);
});

/**
 * A test-only client of the launcher socket (/v1/launcher) as `token`: its hello, `msgs`, then
 * `last`, whose answer (adopt.grant or error) it returns: the controller handles one connection's
 * messages in order, so by then it has handled `msgs`.
 */
async function asLauncher(token: string, msgs: object[], last: { t: "adopt"; jobId: number; stepId: number; req: number; nodes: string[] }): Promise<any> {
  const ws = new WebSocket(`${c.url.replace(/^http/, "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  const reply = new Promise<any>((resolve) => {
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data));
      if ((m.t === "adopt.grant" || m.t === "error") && m.req === last.req) resolve(m);
    };
    ws.onclose = (e) => resolve({ t: "closed", reason: e.reason });
  });
  for (const m of [{ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION }, ...msgs, last]) ws.send(JSON.stringify(m));
  const r = await reply;
  ws.close();
  return r;
}

describe("a launcher repeating its fault message while a committed resize is open", () => {
  test("a shrink 3 -> 2 whose leaving rank holds after its commit, a staying node lost (DOWN), and its fault sent twice more as the job's token: the loss is kept once (one event), the controller answers, one fault adaptation 2 -> 1 follows the shrink, the right answer", async () => {
    const hold = join(c.dir, `hold-leave-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", ...jacobi(), "--hold-leave", hold], /iteration 100 on 3 ranks/);
    const before = (await c.job(job.id)).allocation as string[];
    // The job's token, as its launcher and its ranks have it.
    const environ = readFileSync(`/proc/${rankPids(JACOBI, before[0]!)[0]}/environ`, "utf8").split("\0");
    const token = environ.find((v) => v.startsWith("EBB_TOKEN="))?.slice("EBB_TOKEN=".length);
    expect(token).toBeDefined();
    expect(token).not.toBe(c.token);
    expect((await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 2 })).status).toBe(202);
    await waitFor("the leaving rank to hold after the commit", () => /rank 2 left at iteration \d+, holding/.test(job.output()), 60_000);
    const victim = before[1]!;
    await kill(victim);
    await waitFor("the controller to see the node gone", async () => (await c.api("GET", "/v1/nodes")).json.nodes.some((n: any) => n.name === victim && n.state === "DOWN"), 30_000);
    const fault = { t: "fault", jobId: job.id, node: victim, reason: "reported again by a test client" };
    const answer = await asLauncher(token!, [fault, fault], { t: "adopt", jobId: job.id, stepId: 0, req: 1, nodes: [before[0]!] });
    expect(answer.t).toBe("adopt.grant");
    const kept = (await c.job(job.id)).events.filter((e: any) => e.kind === "lost-after-commit");
    expect(kept.map((e: any) => e.data?.node ?? e.message)).toHaveLength(1);
    expect(kept[0].message).toContain(`node ${victim} failed (stopped responding)`);
    writeFileSync(hold, "");
    release();
    const { end } = await expectRightAnswer(job, /jacobi: fault: lost rank 1 at iteration \d+; restored iteration \d+ on 1 ranks \(was 2\)/);
    expect(end.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.state, a.removed])).toEqual([
      [3, 2, "COMMITTED", [before[2]]],
      [2, 1, "COMMITTED", [victim]],
    ]);
    expect(end.allocation).toEqual([before[0]]);
  }, 180_000);
});

describe("a node lost after the fault window opened", () => {
  test("4 nodes: allocation[1] SIGKILLed, then allocation[3] while the survivors hold in the fault window: it is superseded, one fault adaptation 4 -> 2", async () => {
    const hold = join(c.dir, `hold-fault-${Date.now()}`);
    const job = await elasticRun(c, ["-N", "4", "--elastic", "--min-nodes", "2", "--max-nodes", "4", "--", ...jacobi(), "--hold-window", hold], /iteration 100 on 4 ranks/);
    const alloc = (await c.job(job.id)).allocation as string[];
    await kill(alloc[1]!);
    // The window opened (past the 250 ms wait for nodes lost together): rank 0 is in it.
    await waitFor("the survivors to hold in the fault window", () => /in the fault window \(lost 1\)/.test(job.output()), 60_000);
    await kill(alloc[3]!);
    writeFileSync(hold, "");
    release();
    // Ranks 1 and 3: their buddies (2 and 0) survive.
    const err = await expectRecovered(job, /jacobi: fault: lost ranks 1,3 at iteration \d+; restored iteration \d+ on 2 ranks \(was 4\)/, 4, 2, [alloc[1]!, alloc[3]!]);
    expect(err).toContain(`lost node ${alloc[3]}`);
  }, 120_000);
});

/** Pids of the Jacobi ranks the agent of `node` runs for this cluster. */
const ranksOn = (node: string) => rankPids(JACOBI, node, c.url);

describe("the agent reports its ranks dead", () => {
  test("the ranks of one of 3 nodes SIGKILLed while its agent lives: a fault adaptation, the node stays UP, the right answer", async () => {
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "2", "--max-nodes", "3", "--", ...jacobi()], /iteration 100 on 3 ranks/);
    const victim = (await c.job(job.id)).allocation[1] as string;
    const pids = ranksOn(victim);
    expect(pids.length).toBe(1);
    for (const pid of pids) process.kill(pid, "SIGKILL");
    release();
    const { out, err, code } = await job.finished;
    const got = /checksum=(\w+) heat=(\S+)/.exec(out);
    if (code !== 0) console.log(`ebb run: ${code}\n${out}\n${err}\n${c.daemonLogs().slice(-6000)}`);
    expect(code).toBe(0);
    expect(out).toMatch(/jacobi: fault: lost rank \d at iteration \d+; restored iteration \d+ on 2 ranks \(was 3\)/);
    expect(got?.[1]).toBe(want[1]!);
    expect(got?.[2]).toBe(want[2]!);
    const end = await c.job(job.id);
    expect(end.state).toBe("COMPLETED");
    const fault = end.adaptations[0];
    expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state]).toEqual([3, 2, 3, 2, "COMMITTED"]);
    expect(fault.removed).toEqual([victim]);
    expect(err).toContain(`the ranks of ${victim} are lost`);
    // Its agent lived through it: the node goes back to the pool, it never went DOWN.
    const agent = c.agents.get(victim)!;
    expect(agent.exitCode).toBeNull();
    await c.waitNodes(5, "IDLE");
  }, 120_000);
});

describe("the agent reports its ranks dead on a node that is not the launcher's child", () => {
  // Fan-out 2, 5 nodes: launcher -> allocation[0], [1]; [0] -> [2], [3]; [1] -> [4]. The report
  // comes up through the parent agent, which must not wait for a commit of the node's ranks.
  for (const victimIndex of [4, 1]) {
    test(`the rank of allocation[${victimIndex}] (${victimIndex === 4 ? "a leaf below allocation[1]" : "an inner node, parent of allocation[4]"}) SIGKILLed: 5 -> 4, the right answer`, async () => {
      const job = await elasticRun(c, ["-N", "5", "--fanout", "2", "--elastic", "--min-nodes", "2", "--max-nodes", "5", "--", ...jacobi()], /iteration 100 on 5 ranks/);
      const victim = (await c.job(job.id)).allocation[victimIndex] as string;
      const pids = ranksOn(victim);
      expect(pids.length).toBe(1);
      for (const pid of pids) process.kill(pid, "SIGKILL");
      release();
      const err = await expectRecovered(job, new RegExp(`jacobi: fault: lost rank ${victimIndex} at iteration \\d+; restored iteration \\d+ on 4 ranks \\(was 5\\)`), 5, 4, [victim]);
      expect(err).toContain(`the ranks of ${victim} are lost`);
      expect(c.agents.get(victim)!.exitCode).toBeNull();
      await c.waitNodes(5, "IDLE");
    }, 120_000);
  }
});

describe("an elastic command job (POST /v1/jobs argv, no ebb run)", () => {
  // Its step root runs on the controller's host, as `ebb run` runs outside the nodes: the first node
  // may go like any other.
  for (const victimIndex of [0, 2]) {
    test(`node ${victimIndex} of its 3 SIGKILLed mid-run: a fault adaptation 3 -> 2, COMPLETED with the fixed-size answer in its output file`, async () => {
      const id = await c.submit({ argv: jacobi(), nodes: 3, elastic: true, minNodes: 2, maxNodes: 3 });
      const job = await c.waitJob(id, ["RUNNING"], 60_000);
      await waitFor("iteration 100", () => c.read(job.output).includes("iteration 100 on 3 ranks"), 60_000);
      const victim = job.allocation[victimIndex] as string;
      await kill(victim);
      release();
      const end = await c.waitJob(id, ["NODE_FAIL", "FAILED", "COMPLETED", "CANCELLED", "TIMEOUT"], 100_000);
      const out = c.read(job.output);
      if (end.state !== "COMPLETED") console.log(`job ${id}: ${end.state} ${end.reason}\n${out}\n${c.daemonLogs().slice(-6000)}`);
      expect(end.state).toBe("COMPLETED");
      expect(end.exitCode).toBe(0);
      expect(out).toMatch(new RegExp(`jacobi: fault: lost rank ${victimIndex} at iteration \\d+; restored iteration \\d+ on 2 ranks \\(was 3\\)`));
      expect(out).toContain(`lost node ${victim}`);
      const got = /checksum=(\w+) heat=(\S+)/.exec(out);
      expect(got?.[1]).toBe(want[1]!);
      expect(got?.[2]).toBe(want[2]!);
      const fault = end.adaptations[0];
      expect([fault.fromNodes, fault.toNodes, fault.fromRanks, fault.toRanks, fault.state]).toEqual([3, 2, 3, 2, "COMMITTED"]);
      expect(fault.removed).toEqual([victim]);
      expect(end.steps[0].state).toBe("COMPLETED");
    }, 120_000);
  }
});

describe("jobs that cannot go on after a node failure end NODE_FAIL", () => {
  test("a rigid Jacobi run on 3 nodes", async () => {
    const job = await elasticRun(c, ["-N", "3", "--", ...jacobi()], /iteration 100 on 3 ranks/);
    const victim = (await c.job(job.id)).allocation[1] as string;
    await kill(victim);
    release();
    const { code } = await job.finished;
    expect(code).not.toBe(0);
    const end = await c.waitJob(job.id, ["NODE_FAIL", "FAILED", "COMPLETED", "CANCELLED"]);
    expect(end.state).toBe("NODE_FAIL");
    expect(end.reason).toContain(victim);
    expect(end.adaptations ?? []).toEqual([]);
  }, 120_000);

  test("a rigid command job (POST /v1/jobs argv) that loses its first node", async () => {
    const id = await c.submit({ argv: jacobi(), nodes: 3 });
    const job = await c.waitJob(id, ["RUNNING"], 60_000);
    await waitFor("iteration 100", () => c.read(job.output).includes("iteration 100 on 3 ranks"), 60_000);
    const victim = job.allocation[0] as string;
    await kill(victim);
    release();
    const end = await c.waitJob(id, ["NODE_FAIL", "FAILED", "COMPLETED", "CANCELLED"], 60_000);
    expect(end.state).toBe("NODE_FAIL");
    expect(end.reason).toContain(victim);
  }, 120_000);

  test("an elastic run whose 2 survivors are below its minimum of 3", async () => {
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "3", "--max-nodes", "3", "--", ...jacobi()], /iteration 100 on 3 ranks/);
    const victim = (await c.job(job.id)).allocation[2] as string;
    await kill(victim);
    release();
    const { code } = await job.finished;
    expect(code).not.toBe(0);
    const end = await waitFor("the job to end", async () => {
      const j = await c.job(job.id);
      return ["NODE_FAIL", "FAILED", "COMPLETED", "CANCELLED"].includes(j.state) ? j : undefined;
    });
    expect(end.state).toBe("NODE_FAIL");
    expect(end.reason).toContain(victim);
    expect(end.adaptations).toEqual([]);
  }, 120_000);
});
