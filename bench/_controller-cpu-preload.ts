/**
 * Preloaded into the controller by bench/_controller-cpu.ts (not run alone): wraps the methods of
 * the controller's main paths so that each call adds the process's CPU time it took (getrusage:
 * all threads, inclusive of the calls it makes) to its path's total, and writes the totals to
 * `$EBB_CPU_OUT.PID` twice a second and at exit.
 */
import { writeFileSync } from "node:fs";

const src = new URL("../src/", import.meta.url).pathname;
const out = `${process.env.EBB_CPU_OUT}.${process.pid}`;
const totals: Record<string, { us: number; calls: number }> = {};
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

function wrap(proto: Record<string, unknown>, name: string, path: string): void {
  const f = proto[name] as (...a: unknown[]) => unknown;
  if (typeof f !== "function") throw new Error(`${path}: no method ${name}`);
  proto[name] = function (this: unknown, ...args: unknown[]) {
    const t0 = cpu();
    try {
      return f.apply(this, args);
    } finally {
      const t = (totals[path] ??= { us: 0, calls: 0 });
      t.us += cpu() - t0;
      t.calls++;
    }
  };
}

const proto = async (file: string, cls: string) => ((await import(`${src}${file}`)) as Record<string, { prototype: Record<string, unknown> }>)[cls]!.prototype;
const PATHS: [string, string, string, string][] = [
  ["roles/controller/scheduler.ts", "SchedulerLoop", "pass", "pass (all)"],
  ["roles/controller/snapshot.ts", "Snapshots", "take", "pass: snapshot"],
  ["roles/controller/eligibility.ts", "Eligibility", "refresh", "pass: eligibility"],
  ["roles/controller/plan-apply.ts", "PlanApplier", "apply", "pass: apply (start tx + launch)"],
  ["roles/controller/jobs.ts", "Jobs", "startAll", "start: startAll (tx + launch)"],
  ["roles/controller/jobs.ts", "Jobs", "launch", "start: launch (job.start)"],
  ["roles/controller/agents.ts", "AgentHub", "recordReports", "turn: agents' reports (tx + after-commit)"],
  ["roles/controller/jobs.ts", "Jobs", "acceptQueued", "turn: submissions (tx + after-commit)"],
  ["roles/controller/ledger.ts", "Ledger", "commitEach", "turn: commitEach (tx)"],
  ["roles/controller/jobs.ts", "Jobs", "prepare", "submit: prepare"],
  ["roles/controller/jobs.ts", "Jobs", "afterSubmit", "submit: afterSubmit"],
  ["roles/controller/jobs.ts", "Jobs", "afterEnd", "end: afterEnd"],
  ["roles/controller/agents.ts", "AgentHub", "onMessage", "WS in: agent onMessage"],
  ["util/microtask-batch.ts", "MicrotaskBatch", "flush", "WS out: flush"],
  ["store/jobs.ts", "JobStore", "tx", "sql: tx (all in it, commit included)"],
  ["store/jobs.ts", "JobStore", "savepoint", "sql: savepoint (all in it)"],
  ...["insertJob", "addEvent", "markRunning", "openAllocation", "insertStep", "markEndedWithUsage", "finishStep"].map((m): [string, string, string, string] => ["store/jobs.ts", "JobStore", m, `sql: ${m}`]),
  ["store/plans.ts", "PlanStore", "insert", "sql: plan insert"],
];
for (const [file, cls, method, path] of PATHS) wrap(await proto(file, cls), method, path);

const t0 = cpu();
const dump = () => writeFileSync(out, JSON.stringify({ total: cpu() - t0, totals }));
setInterval(dump, 500).unref();
process.on("exit", dump);
