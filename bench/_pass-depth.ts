/**
 * The CPU of a scheduling pass against the depth of the queue (issue 36): `bun
 * bench/_pass-depth.ts [DEPTH] [PASSES] [ROUNDS]` runs the controller's pass (the ledger, Jobs, the
 * snapshot with the queue policy of a default controller: multifactor priority, the queue kept
 * between passes; the pure planner; the plan applier; an in-memory database: test/support's
 * ControllerHarness) on 4 nodes of 2 cores, 8 jobs running, and 10 or DEPTH (default 400) waiting.
 * Each of PASSES (default 2000) steps ends one running job, submits one, and runs an event pass
 * (no reasons), which starts one: the CPU of that pass is averaged. ROUNDS (default 4) rounds
 * alternate the depths (ABBA); prints each, the medians and the ratio. One process per trial, as
 * the controller runs (BUN_JSC_useFTLJIT=0 is the controller's; set it to compare alike). Not a
 * benchmark (run.ts skips files named _*).
 */
import { loadavg } from "node:os";
import { QueuePolicy } from "../src/roles/controller/queue.ts";
import { SchedulerLoop } from "../src/roles/controller/scheduler.ts";
import { Snapshots } from "../src/roles/controller/snapshot.ts";
import { SpawnQueue } from "../src/roles/controller/spawns.ts";
import { DEFAULT_LIMITS, resolveConfig } from "../src/sched/config.ts";
import { Partitions } from "../src/sched/partitions.ts";
import { resolvePriority } from "../src/sched/priority.ts";
import { ControllerHarness } from "../test/support/controller-harness.ts";
import { median } from "./lib.ts";

const [depthArg, passesArg, roundsArg, trial] = process.argv.slice(2);
const depth = Number(depthArg ?? 400);
const passes = Number(passesArg ?? 2000);

/** One trial: µs of CPU per event pass at `waiting` jobs waiting. */
function trialAt(waiting: number): number {
  const h = new ControllerHarness(0);
  for (let i = 1; i <= 4; i++) h.addNode(`n${i}`, 2);
  const queue = new QueuePolicy({ priority: resolvePriority(), partitions: new Partitions(), userLimits: {} }, h.state);
  const snapshots = new Snapshots(h.state, () => h.elastic, new SpawnQueue(h.state, () => {}), resolveConfig({}), DEFAULT_LIMITS, 60, undefined, queue);
  const loop = new SchedulerLoop(h.state, snapshots, h.applier);
  const t0 = Date.now() - 60_000;
  const submit = (at: number) => h.jobs.submit({ cwd: "/tmp", argv: ["true"] } as never, h.by, at);
  for (let i = 0; i < 8 + waiting; i++) submit(t0);
  loop.pass(t0 + 1, false);
  let cpu = 0;
  for (let r = 0; r < passes; r++) {
    const at = t0 + 2 + r;
    h.jobs.exited(h.state.started()[0]!.row.id, 0, undefined, undefined, at);
    submit(at);
    const c = process.cpuUsage();
    loop.pass(at, false);
    const d = process.cpuUsage(c);
    cpu += d.user + d.system;
  }
  if (h.state.started().length !== 8) throw new Error(`${h.state.started().length} running, not 8: a pass did not start one`);
  return cpu / passes;
}

if (trial !== undefined) {
  console.log(trialAt(Number(trial)));
  process.exit(0);
}
const rounds = Number(roundsArg ?? 4);
const got: Record<number, number[]> = { 10: [], [depth]: [] };
for (let r = 0; r < rounds; r++) {
  for (const d of r % 2 === 0 ? [10, depth] : [depth, 10]) {
    const p = Bun.spawnSync([process.execPath, import.meta.path, String(depth), String(passes), "1", String(d)], { env: { ...process.env, EBB_LOG: "error" }, stderr: "inherit" });
    got[d]!.push(Number(p.stdout.toString().trim()));
    console.log(`round ${r}: ${d} waiting, ${got[d]!.at(-1)!.toFixed(0)} µs of CPU a pass, load ${loadavg()[0]!.toFixed(1)}`);
  }
}
console.log(`medians: 10 waiting ${median(got[10]!).toFixed(0)} µs, ${depth} waiting ${median(got[depth]!).toFixed(0)} µs a pass: ${(median(got[depth]!) / median(got[10]!)).toFixed(2)}x`);
