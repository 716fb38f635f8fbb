/**
 * The controller SIGKILLed at random points of 1,000 jobs' lives and restarted on the same state
 * dir: a real controller, 4 agents, `true` jobs, arrays, batch scripts and elastic command jobs
 * (their step roots on the controller's host) shrunk and grown through the API while it goes on.
 *
 * - Nothing is lost or doubled: every job the API acknowledged ends exactly once, under the id it
 *   was given; every job the controller holds was submitted (a submission whose answer a kill cut
 *   off is there whole or not at all).
 * - The memory a restart rebuilds from the store equals the memory before the kill: at some kills
 *   the test first stops every process that talks to the controller (agents and step roots,
 *   SIGSTOP) and its own submissions, waits until the controller has nothing left to do (no
 *   message to read; a node's COMPLETING hold, 5 s, is over), takes the ledger's dump (SIGUSR2,
 *   roles/controller/memory.ts), SIGKILLs the controller, restarts it — nothing can reach it — and
 *   compares the restarted controller's dump with the one before. The other kills come with
 *   everything running.
 *
 * EBB_RESTART_SEED=N replays a run's random choices (the seed is printed).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "../../src/sim/random.ts";
import { commandLines, pidAlive, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { COUNTER } from "../support/elastic-run.ts";

const BUN = process.execPath;
const JOBS = 1000;
/** raw: SIGKILL with everything running; compared: quiesce, dump, SIGKILL, restart, dump. */
const KILLS = ["raw", "compared", "raw", "compared", "raw", "raw"] as const;
const FINAL = ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"];

const seed = Number(process.env.EBB_RESTART_SEED ?? Date.now() % 1_000_000);
const rng = mulberry32(seed);
const int = (n: number) => Math.floor(rng.next() * n);

let c: TestCluster | undefined;
/** Processes stopped by the test: continued whatever happens. */
const stopped = new Set<number>();
afterAll(async () => {
  for (const pid of stopped) if (pidAlive(pid)) process.kill(pid, "SIGCONT");
  await c?.stop();
});

/** One submission: its unique name, how many jobs it makes, and what the API answered. */
interface Sent {
  name: string;
  jobs: number;
  id?: number;
  /** The connection failed (a kill): the controller may or may not have it. */
  uncertain?: boolean;
}

test(`SIGKILL at ${KILLS.length} random points of ${JOBS} jobs with resizes: no job lost or doubled, and the replayed memory equals the memory before the kill`, async () => {
  console.log(`controller-restart: EBB_RESTART_SEED=${seed}`);
  // Heartbeats every 5 s (a node goes DOWN after 15 s of silence) and no kill wait: a quiesced
  // controller holds no timer that changes its jobs, and a node's COMPLETING hold ends in 5 s.
  // An adaptation whose end a kill took is reported again by its re-attaching launcher; one whose
  // order a kill took before it left the controller fails when the launcher re-attaches without
  // it. The adapt timeout, 30 s and not the default 10 minutes, is the net under both.
  const cl = await startCluster({ agents: 4, heartbeat: 5, killWait: 0, controllerArgs: ["--policy", "easy", "--adapt-timeout", "30"] });
  c = cl;
  const sent: Sent[] = [];
  const elastic: Sent[] = [];
  const acked = () => sent.reduce((n, s) => n + (s.id !== undefined ? s.jobs : 0), 0);

  // The workload and the resizes go through a gate, closed while the controller is down or quiesced.
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  let busy = 0;
  const close = async () => {
    gate = new Promise((r) => (open = r));
    await waitFor("the test's requests in flight", () => busy === 0, 30_000);
  };
  /** A request through the gate; undefined when the connection failed (the controller was killed). */
  const request = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any } | undefined> => {
    await gate;
    busy++;
    try {
      return await cl.api(method, path, body);
    } catch {
      return undefined;
    } finally {
      busy--;
    }
  };

  const submit = async (body: Record<string, unknown>, jobs: number): Promise<Sent> => {
    const s: Sent = { name: `s${sent.length}`, jobs };
    sent.push(s);
    const r = await request("POST", "/v1/jobs", { cwd: cl.dir, output: "/dev/null", name: s.name, ...body });
    if (r === undefined) s.uncertain = true;
    else if (r.status === 201) s.id = r.json.id;
    else throw new Error(`submit ${s.name}: ${r.status} ${JSON.stringify(r.json)}`);
    return s;
  };

  // Resolved when an array has been acknowledged: its tasks wait in the queue for a moment.
  let arrayIn = () => {};
  const nextArray = () => new Promise<void>((r) => (arrayIn = r));

  // 1,000 jobs at about 40 a second: arrays of `true`, batch scripts, single `true` jobs, and
  // three elastic jobs of 2 nodes; kills land among them.
  const workload = (async () => {
    const t0 = Date.now();
    while (acked() < JOBS) {
      const left = JOBS - acked();
      const r = rng.next();
      if (elastic.length < 3 && acked() >= elastic.length * 250 + 50) elastic.push(await submit({ argv: [BUN, COUNTER, "300", "20"], output: `elastic-${elastic.length}.out`, nodes: 2, elastic: true, minNodes: 1, maxNodes: 2 }, 1));
      else if (r < 0.08 && left > 60) {
        const n = 20 + int(30);
        if ((await submit({ argv: ["true"], array: `0-${n - 1}` }, n)).id !== undefined) arrayIn();
      } else if (r < 0.25) await submit({ script: `#!/bin/sh\nsleep 0.0${int(5)}\n` }, 1);
      else await submit({ argv: ["true"] }, 1);
      const ahead = acked() / 40 - (Date.now() - t0) / 1000;
      if (ahead > 0) await Bun.sleep(ahead * 1000);
    }
  })();

  // Each elastic job, once running on its 2 nodes, is shrunk to 1 and grown back to 2 when a node is idle.
  const committed = new Set<string>();
  const resizes = (async () => {
    const done = new Set<Sent>();
    while (done.size < 3) {
      await Bun.sleep(300);
      for (const e of elastic) {
        if (done.has(e) || e.id === undefined) {
          if (e.uncertain) done.add(e);
          continue;
        }
        const j = (await request("GET", `/v1/jobs/${e.id}`))?.json;
        if (!j) continue;
        for (const a of j.adaptations ?? []) if (a.state === "COMMITTED") committed.add(`${e.id}:${a.id}`);
        if (FINAL.includes(j.state)) done.add(e);
        if (j.state !== "RUNNING") continue;
        const to = j.allocation.length === 2 ? 1 : 2;
        if ((j.adaptations ?? []).filter((a: any) => a.state === "COMMITTED").length >= 3) continue;
        await request("POST", `/v1/jobs/${e.id}/resize`, { nodes: to });
      }
    }
  })();

  /** Step roots of elastic jobs: children of a controller this test started (they outlive it). */
  const roots = new Set<number>();
  const findRoots = () => {
    for (const p of commandLines()) if (p.ppid === cl.controller.pid && p.cmd.includes("step-root")) roots.add(p.pid);
  };
  const dump = async (): Promise<any> => {
    const file = join(cl.stateDir, "memory.json");
    rmSync(file, { force: true });
    process.kill(cl.controller.pid, "SIGUSR2");
    return JSON.parse(await waitFor("the controller's memory dump", () => existsSync(file) && readFileSync(file, "utf8"), 10_000));
  };
  const kill = async () => {
    findRoots();
    cl.controller.kill("SIGKILL");
    await cl.controller.exited;
  };

  const compared: { jobs: number }[] = [];
  const log: string[] = [];
  for (const kind of KILLS) {
    await Bun.sleep(1000 + int(2500));
    // A quiesced kill holds more than the few jobs running at any moment: one follows an array's submission.
    if (kind === "compared") await Promise.race([nextArray(), Bun.sleep(5_000)]);
    log.push(`${kind} kill after ${acked()} jobs`);
    if (kind === "raw") {
      await kill();
      await close();
      await cl.startController();
      open();
      continue;
    }
    // Quiesce: no request of ours, no agent or step root that can send anything.
    await close();
    findRoots();
    const peers = [...[...cl.agents.values()].map((a) => a.pid), ...roots].filter(pidAlive);
    for (const pid of peers) {
      process.kill(pid, "SIGSTOP");
      stopped.add(pid);
    }
    await Bun.sleep(6_500);
    let before = await dump();
    for (let tries = 0; ; tries++) {
      await Bun.sleep(1_200);
      const again = await dump();
      if (JSON.stringify(again) === JSON.stringify(before)) break;
      if (tries === 5) throw new Error("the controller did not come to rest with its peers stopped");
      before = again;
    }
    await kill();
    await cl.startController();
    const after = await dump();
    expect(after).toEqual(before);
    compared.push({ jobs: before.jobs.length });
    log.push(`  compared ${before.jobs.length} active jobs`);
    for (const pid of peers) {
      if (pidAlive(pid)) process.kill(pid, "SIGCONT");
      stopped.delete(pid);
    }
    open();
  }
  await workload;
  await resizes;

  // Every job has ended: list them all.
  const all = await waitFor(
    "every job to end",
    async () => {
      const jobs = (await cl.api("GET", "/v1/jobs?limit=100000")).json.jobs as any[];
      return jobs.every((j) => FINAL.includes(j.state)) ? jobs : undefined;
    },
    90_000,
  );
  const states = Object.entries(Object.groupBy(all, (j) => j.state as string)).map(([k, v]) => `${k} ${v!.length}`);
  console.log(`controller-restart: ${log.join("; ")}; ${sent.filter((x) => x.uncertain).length} submissions cut off; ${committed.size} resizes committed; ${states.join(", ")}`);
  const byName = Map.groupBy(all, (j) => j.name as string);
  const problems: string[] = [];
  for (const s of sent) {
    const got = byName.get(s.name) ?? [];
    byName.delete(s.name);
    if (s.uncertain && got.length === 0) continue;
    if (got.length !== s.jobs) problems.push(`${s.name}: ${got.length} jobs, submitted ${s.jobs} (${got.map((j) => j.id).join(",")})`);
    if (s.id !== undefined && Math.min(...got.map((j) => j.id)) !== s.id) problems.push(`${s.name}: acknowledged as job ${s.id}, found ${got.map((j) => j.id).join(",")}`);
    if (s.jobs > 1 && new Set(got.map((j) => j.arrayTaskId)).size !== got.length) problems.push(`${s.name}: an array task twice`);
  }
  for (const [name, jobs] of byName) problems.push(`unknown jobs ${jobs.map((j) => j.id).join(",")} named ${name}`);
  expect(problems).toEqual([]);
  expect(new Set(all.map((j) => j.id)).size).toBe(all.length);
  expect(acked()).toBeGreaterThanOrEqual(JOBS);

  // What the kills cost: a job whose start was committed but not sent before a kill has no
  // processes on its node when the agent re-registers (NODE_FAIL, saying so; an elastic job takes
  // that node for lost and ends NODE_FAIL when its survivors cannot adapt). Nothing else fails.
  const failed = all.filter((j) => j.state !== "COMPLETED" && !(j.state === "NODE_FAIL" && /re-registered without the job's processes|failed and the survivors could not adapt/.test(j.reason)));
  expect(failed.map((j) => `${j.id} ${j.name} ${j.state}: ${j.reason}`)).toEqual([]);
  // The elastic jobs were resized (a kill may cut one adaptation short), and the quiesced kills held jobs.
  expect(committed.size).toBeGreaterThanOrEqual(3);
  expect(compared.length).toBe(KILLS.filter((k) => k === "compared").length);
  expect(compared.reduce((n, x) => n + x.jobs, 0)).toBeGreaterThan(0);
}, 240_000);
