/**
 * The ledger, the one writer of jobs' rows and allocations: a seeded random run of 400 jobs
 * through every kind of change (submissions and arrays, holds, starts, grows, shrinks, adaptations,
 * limits, steps, usage, ends), with whole nodes and with shares of nodes (several jobs on one
 * node, each with its cores, memory and GPUs), and after every transaction — every point a SIGKILL
 * could leave the store at — the memory a restarted controller rebuilds from the store (`restore`,
 * the same reducer) equals the memory the changes built, node by node and job by job. No job is
 * lost or doubled, and no core or GPU of a node is held twice.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { Ledger } from "../../src/roles/controller/ledger.ts";
import { ledgerMemory } from "../../src/roles/controller/memory.ts";
import { ClusterState, type JobRuntime } from "../../src/roles/controller/state.ts";
import { openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { NodeRow } from "../../src/store/nodes.ts";
import { mulberry32 } from "../../src/sim/random.ts";
import { FINAL_STATES } from "../../src/domain/job.ts";
import type { NodeShare } from "../../src/domain/resources.ts";

const NODES = 24;
const CORES = 4;

function cluster(): ClusterState {
  const state = new ClusterState();
  for (let i = 1; i <= NODES; i++) {
    const name = `n${String(i).padStart(2, "0")}`;
    const row: NodeRow = { name, addr: `127.0.0.1:${7000 + i}`, cpus: CORES, memoryMb: 1024, gpus: ["a100", null], features: [], status: "UP", reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0 };
    state.nodes.set(name, ClusterState.node(row, 0));
  }
  return state;
}

/** Shares of `count` nodes with `cores` free cores each (undefined: whole idle nodes), a GPU with each when one is free; undefined if not enough fit. */
function place(state: ClusterState, count: number, cores: number | undefined, not: readonly string[] = []): NodeShare[] | undefined {
  const out: NodeShare[] = [];
  for (const n of state.nodes.values()) {
    if (out.length === count) break;
    if (not.includes(n.row.name)) continue;
    if (cores === undefined) {
      if (state.isIdle(n)) out.push(state.wholeShare(n.row.name));
      continue;
    }
    const held = [...n.shares.values()];
    const freeCores = [...Array(CORES).keys()].filter((c) => !held.some((s) => s.cores.includes(c)));
    const freeGpus = [0, 1].filter((g) => !held.some((s) => s.gpus.includes(g)));
    if (freeCores.length >= cores) out.push({ node: n.row.name, cores: freeCores.slice(0, cores), memMiB: 256 * cores, gpus: freeGpus.slice(0, 1) });
  }
  return out.length === count ? out : undefined;
}

const submission = (now: number, nodes: number) => ({
  name: "j",
  kind: "command" as const,
  argv: ["true"],
  script: null,
  args: null,
  nodes,
  minNodes: 1,
  maxNodes: nodes + 2,
  elastic: true,
  tasks: null,
  tasksPerNode: null,
  overcommit: false,
  timeLimit: 600,
  env: { A: "1" },
  cwd: "/tmp",
  output: "out-%j",
  error: null,
  submitTime: now,
  sampleInterval: null,
  elasticSettings: null,
  arrayLimit: null,
  held: false,
  dependency: null,
  beginTime: null,
  exclude: null,
  nodelist: null,
  sizes: null,
  program: null,
  signal: null,
  requeue: false,
  restarts: 0,
  appendOutput: false,
  user: "u",
  submittedBy: null,
});

/** Jobs in the random run: enough for every kind of change many times over (the counts are checked at its end). */
const JOBS = 400;

test("after every transaction of 400 jobs' lives, the memory rebuilt from the store equals the memory the changes built", () => {
  const path = `/tmp/ebb-ledger-${process.pid}.db`;
  const db = openDb(path);
  const store = new JobStore(db);
  const state = cluster();
  const ledger = new Ledger(store, state);
  const { next } = mulberry32(20261129);
  const int = (n: number) => Math.floor(next() * n);
  let now = 1_000_000;
  let submitted = 0;
  let ended = 0;
  // Jobs with a resource request take `cores` of a node each (several on one node); the others whole nodes.
  const coresOf = (job: JobRuntime) => (job.row.resources ? 1 + (job.row.id % 2) : undefined);
  let shared = 0;
  const active = (pred: (j: JobRuntime) => boolean) => [...state.jobs.values()].filter(pred);
  let checks = 0;
  while (submitted < JOBS || state.jobs.size > 0) {
    now += 1 + int(1000);
    const r = next();
    const pending = active((j) => j.row.state === "PENDING");
    const running = active((j) => j.row.state === "RUNNING");
    const adapting = active((j) => j.row.state === "ADAPTING");
    const pick = <T>(xs: T[]) => xs[int(xs.length)]!;
    if (submitted < JOBS && r < 0.25) {
      const tasks = next() < 0.2 ? 1 + int(20) : 0;
      const values = { ...submission(now, 1 + int(3)), resources: next() < 0.6 ? { cpusPerTask: 1 + int(2), tasks: 1, exclusive: false } : null };
      ledger.commit((tx) => (tasks ? tx.submitted({ ...values, arrayLimit: null }, Array.from({ length: tasks }, (_, i) => i * 2), `0-${2 * (tasks - 1)}:2`) : tx.submitted(values)));
      submitted += tasks || 1;
    } else if (pending.length > 0 && r < 0.45) {
      const job = pick(pending);
      const shares = place(state, job.row.nodes, coresOf(job));
      if (shares) ledger.commit((tx) => tx.started(job, shares, now, { nextStep: 1, output: `out-${job.row.id}`, error: null, timeLimit: 300 + int(600) }));
      else if (next() < 0.5) ledger.commit((tx) => tx.held([job], !job.row.held));
    } else if (running.length > 0 && r < 0.6) {
      const job = pick(running);
      const added = next() < 0.5 ? place(state, 1 + int(2), coresOf(job), job.nodes) : undefined;
      if (added) {
        // A grow: ADAPTING with the added nodes, then committed or failed (the added nodes go back).
        ledger.commit((tx) => {
          tx.state(job, "ADAPTING");
          tx.allocated(job, added, now);
          tx.steps(job, job.row.nextStep + 1);
        });
        if (next() < 0.3)
          ledger.commit((tx) => {
            tx.released(job, added.map((s) => s.node), now);
            tx.state(job, "RUNNING");
          });
      } else if (job.nodes.length > 1) {
        // A fault: one node leaves at once, the job adapts.
        ledger.commit((tx) => {
          tx.state(job, "ADAPTING");
          tx.released(job, [pick(job.nodes)], now);
        });
      } else if (next() < 0.1) ledger.commit((tx) => tx.requeued(job, now));
      else if (next() < 0.5) ledger.commit((tx) => tx.limit(job, job.row.timeLimit + 60));
      else ledger.commit((tx) => tx.usage(job.row.id, { cpuSec: int(1000) / 10, peakMemMiB: int(512) }));
    } else if (adapting.length > 0 && r < 0.75) {
      const job = pick(adapting);
      ledger.commit((tx) => {
        if (job.nodes.length > 1 && next() < 0.5) tx.released(job, job.nodes.slice(-1), now);
        tx.state(job, "RUNNING");
        tx.limit(job, job.row.timeLimit + int(120));
      });
    } else if (state.jobs.size > 0 && (r >= 0.75 || submitted >= JOBS)) {
      const job = pick([...state.jobs.values()]);
      const final = job.row.state === "PENDING" ? "CANCELLED" : FINAL_STATES[int(FINAL_STATES.length)]!;
      ledger.commit((tx) => tx.ended(job, final, now, final === "COMPLETED" ? 0 : 1, final === "COMPLETED" ? null : "reason"));
      ended++;
    } else continue;
    // No core or GPU of a node is held twice; count the moments a node is shared.
    for (const n of state.nodes.values()) {
      const held = [...n.shares.values()];
      const cores = held.flatMap((s) => s.cores);
      const gpus = held.flatMap((s) => s.gpus);
      expect(new Set(cores).size).toBe(cores.length);
      expect(new Set(gpus).size).toBe(gpus.length);
      if (n.shares.size > 1) shared++;
    }
    // A restart here: a fresh controller's memory from the same store.
    const again = cluster();
    new Ledger(new JobStore(db), again).restore();
    // What a pass reads: the waiting jobs and the others, each in id order, as walking every active job finds them.
    for (const st of [state, again]) {
      const all = [...st.jobs.values()];
      expect(all.map((j) => j.row.id)).toEqual(all.map((j) => j.row.id).sort((a, b) => a - b));
      const ids = (js: readonly JobRuntime[]) => js.map((j) => j.row.id);
      for (const [kept, walked] of [[[...st.waiting()], all.filter((x) => x.row.state === "PENDING")], [st.started(), all.filter((x) => x.row.state !== "PENDING")]] as const)
        if (kept.length !== walked.length || kept.some((j, i) => j !== walked[i])) expect(ids(kept)).toEqual(ids(walked));
    }
    // What a restart must get back: every active job's row and allocation, and who owns each node (the controller's SIGUSR2 dump).
    // Compared as text (the dump's canonical form); a deep toEqual per transaction cost most of the test's time. The diff only on a mismatch.
    const [before, after] = [ledgerMemory(state), ledgerMemory(again)];
    if (JSON.stringify(after) !== JSON.stringify(before)) expect(after).toEqual(before);
    checks++;
  }
  expect(submitted).toBeGreaterThanOrEqual(JOBS);
  expect(checks).toBeGreaterThan(600);
  expect(shared).toBeGreaterThan(40);
  // Every job once: ended ones are final in the store, none active, none twice.
  const rows = store.db.$client.query("select id, state from jobs").all() as { id: number; state: string }[];
  expect(new Set(rows.map((x) => x.id)).size).toBe(rows.length);
  expect(rows.length).toBe(submitted);
  expect(rows.filter((x) => !(FINAL_STATES as readonly string[]).includes(x.state))).toEqual([]);
  expect(ended).toBeGreaterThan(0);
  // A node is held by active jobs only.
  expect([...state.nodes.values()].filter((n) => n.shares.size > 0)).toEqual([]);
  db.$client.close();
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
}, 300_000);

test("a transaction that throws changes neither the store nor memory", () => {
  const db = openDb(":memory:");
  const store = new JobStore(db);
  const state = cluster();
  const ledger = new Ledger(store, state);
  const [row] = ledger.commit((tx) => tx.submitted(submission(1, 2)));
  const job = state.jobs.get(row!.id)!;
  expect(() =>
    ledger.commit((tx) => {
      tx.started(job, [state.wholeShare("n01"), state.wholeShare("n02")], 5, { nextStep: 1, output: "o", error: null, timeLimit: 60 });
      throw new Error("the agent could not be reached");
    }),
  ).toThrow("the agent could not be reached");
  expect({ state: job.row.state, nodes: job.nodes, shares: job.shares, held: state.nodes.get("n01")!.shares.size }).toEqual({ state: "PENDING", nodes: [], shares: [], held: 0 });
  expect(store.getJob(row!.id)!.state).toBe("PENDING");
  expect(store.openAllocations()).toEqual([]);
});

test("an end with its node's usage report (job.usage then job.exit) writes the rows and events the report and then the end write, for one-node and multi-node jobs", () => {
  // Each job's rows and the events memory saw, recorded the folded way and the separate way.
  const outcome = (nodes: string[], usageNode: string, folded: boolean) => {
    const db = openDb(":memory:");
    const store = new JobStore(db);
    const state = cluster();
    const ledger = new Ledger(store, state);
    const [row] = ledger.commit((tx) => tx.submitted(submission(1, nodes.length)));
    const job = state.jobs.get(row!.id)!;
    ledger.commit((tx) => tx.started(job, nodes.map((n) => state.wholeShare(n)), 5, { nextStep: 1, output: "o", error: null, timeLimit: 60 }));
    const used = { node: usageNode, cpuSec: 0.1 + 0.2, peakMemMiB: 7.25 };
    const seen: unknown[] = [];
    ledger.commit((tx) => {
      if (folded) tx.ended(job, "COMPLETED", 9, 0, null, false, used);
      else {
        const usage = store.recordNodeUsage(job.row.id, used.node, used.cpuSec, used.peakMemMiB);
        if (usage) tx.usage(job.row.id, usage);
        tx.ended(job, "COMPLETED", 9, 0, null, false);
      }
      seen.push(job.row.usage);
    });
    seen.push(job.row.usage, job.row.state, state.jobs.has(job.row.id));
    const q = (sql: string) => db.$client.query(sql).values();
    const rows = [q("SELECT * FROM jobs"), q("SELECT * FROM job_nodes ORDER BY id"), q("SELECT * FROM steps")];
    db.$client.close();
    return { rows, seen };
  };
  for (const [nodes, usageNode] of [[["n01"], "n01"], [["n01", "n02"], "n02"], [["n01", "n02"], "n01"], [["n01"], "n05"]] as const) {
    const folded = outcome([...nodes], usageNode, true);
    expect(folded).toEqual(outcome([...nodes], usageNode, false));
    if ((nodes as readonly string[]).includes(usageNode)) expect(folded.seen[1]).toEqual({ cpuSec: 0.1 + 0.2, peakMemMiB: 7.25 });
  }
});
