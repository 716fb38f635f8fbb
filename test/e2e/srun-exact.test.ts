/**
 * Task farming in one allocation: `srun -n1 --exact CMD &` in a loop. Each exact step holds its
 * CPU of the job's while it runs; the others wait (srun says so in Slurm's words) and start as
 * steps end. A launcher killed while its step waits leaves the queue; over HTTP an exact step that
 * cannot start now is refused (409 step_busy); a job's end fails its waiting steps. The steps
 * wait on files the script writes, never on a clock.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterForFile, ROOT, waitFor } from "../support/cluster.ts";

const c = clusterForFile({ agents: 1, cpus: 4 });

async function submit(name: string, lines: string[]): Promise<number> {
  writeFileSync(join(c.dir, name), `${lines.join("\n")}\n`);
  const r = await c.ebb(["submit", name]);
  if (r.code !== 0) throw new Error(`ebb submit ${name}: ${r.code} ${r.stderr}`);
  return Number(/Submitted batch job (\d+)/.exec(r.stdout)?.[1]);
}

/** The most intervals open at once. */
function maxOverlap(spans: { start: bigint; end: bigint }[]): number {
  const edges = spans.flatMap((s) => [
    { t: s.start, d: 1 },
    { t: s.end, d: -1 },
  ]);
  edges.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.d - b.d));
  let open = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (open += e.d));
  return most;
}

const WAITING = "step creation temporarily disabled, retrying (Requested nodes are busy)";

describe("srun --exact: steps farmed in one allocation", () => {
  test("6 steps of srun -n1 --exact in a job of -n 2: at most 2 run at once, all 6 run, srun says the waits in Slurm's words", async () => {
    const dir = join(c.dir, "farm");
    mkdirSync(dir);
    // Four sruns must have said they wait before any step goes on: the waits do not hang on timing.
    const id = await submit("farm.sh", [
      "#!/bin/bash",
      "#SBATCH -n 2",
      "#SBATCH -o farm.out",
      "cd farm",
      "for i in 1 2 3 4 5 6; do",
      `  srun -n1 --exact bash -c "date +%s%N > start.$i; grep Cpus_allowed_list /proc/self/status | cut -f2 > cpus.$i; until [ -e go ]; do sleep 0.1; done; sleep 0.3; date +%s%N > end.$i" &`,
      "done",
      `until [ "$(grep -c 'step creation temporarily disabled' ../farm.out)" -ge 4 ]; do sleep 0.1; done`,
      "touch go",
      "wait",
      "echo farmed",
    ]);
    await c.waitJob(id, ["COMPLETED"], 120_000);
    const spans = [1, 2, 3, 4, 5, 6].map((i) => ({ start: BigInt(c.read(`farm/start.${i}`).trim()), end: BigInt(c.read(`farm/end.${i}`).trim()) }));
    expect(maxOverlap(spans)).toBe(2);
    // Steps that ran at once ran on CPUs of their own (each its own core of the job's).
    const cpus = [1, 2, 3, 4, 5, 6].map((i) => c.read(`farm/cpus.${i}`).trim());
    for (const [i, a] of spans.entries()) for (const [j, b] of spans.entries()) if (i < j && a.start < b.end && b.start < a.end) expect(cpus[i]).not.toBe(cpus[j]!);
    const out = c.read("farm.out");
    expect(out.split("\n").filter((l) => l === `srun: Job ${id} ${WAITING}`).length).toBe(4);
    expect(out.split("\n").filter((l) => l === `srun: Step created for job ${id}`).length).toBe(4);
    expect(out).toEndWith("farmed\n");
  }, 180_000);

  test("a launcher killed while its exact step waits leaves the queue: the next one takes the freed CPU while the other step still holds its own", async () => {
    const dir = join(c.dir, "killed");
    mkdirSync(dir);
    const waitFile = (f: string) => `until grep -q 'temporarily disabled' ${f} 2>/dev/null; do sleep 0.1; done`;
    const id = await submit("killed.sh", [
      "#!/bin/bash",
      "#SBATCH -n 2",
      "#SBATCH -o killed.out",
      "cd killed",
      `srun -n1 --exact bash -c "touch held.1; until [ -e stop.1 ]; do sleep 0.1; done" &`,
      "P1=$!",
      `srun -n1 --exact bash -c "touch held.2; until [ -e stop.2 ]; do sleep 0.1; done" &`,
      "until [ -e held.1 ] && [ -e held.2 ]; do sleep 0.1; done",
      `srun -n1 --exact bash -c "touch ran.3" 2> wait.3 &`,
      "P3=$!",
      waitFile("wait.3"),
      "kill -9 $P3",
      `srun -n1 --exact bash -c "touch ran.4" 2> wait.4 &`,
      "P4=$!",
      waitFile("wait.4"),
      // Over HTTP, the same step is refused while the CPUs are held.
      "touch http.now",
      "until [ -e http.done ]; do sleep 0.1; done",
      "touch stop.1",
      "wait $P1",
      "wait $P4",
      "echo step4=$?",
      "ls",
      "touch stop.2",
      "wait",
    ]);
    await waitFor("the script to ask for the HTTP step", () => existsSync(join(dir, "http.now")), 120_000);
    const job = await c.job(id);
    const r = await c.api("POST", `/v1/jobs/${id}/steps`, { argv: ["true"], tasks: 1, exact: true, cwd: c.dir, envDigest: "0".repeat(64) }, job.token ?? c.token);
    writeFileSync(join(dir, "http.done"), "");
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe("step_busy");
    expect(r.json.error.message).toContain("retry when one of them ends");
    await c.waitJob(id, ["COMPLETED"], 120_000);
    const out = c.read("killed.out");
    expect(out).toContain("step4=0\n");
    // Step 4 ran while step 2 held the other CPU; the killed launcher's step never did.
    expect(readdirSync(dir)).toContain("ran.4");
    expect(readdirSync(dir)).not.toContain("ran.3");
  }, 180_000);

  test("ebb run --exact inside a job: a step that waits says so in ebb's words, and the job's end fails it, naming why", async () => {
    const dir = join(c.dir, "ended");
    mkdirSync(dir);
    const id = await submit("ended.sh", ["#!/bin/bash", "#SBATCH -n 1", "#SBATCH -o ended.out", "sleep 600"]);
    await c.waitJob(id, ["RUNNING"], 60_000);
    const env = { ...c.env, EBB_JOB_ID: String(id) };
    const ebbRun = (argv: string[], err: string) => Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "run", "--exact", "-n", "1", "--", ...argv], { cwd: dir, env, stdout: "ignore", stderr: Bun.file(join(dir, err)) });
    const holder = ebbRun(["bash", "-c", "touch held; sleep 600"], "holder.err");
    await waitFor("the first step to hold the job's CPU", () => existsSync(join(dir, "held")), 60_000);
    const waiter = ebbRun(["touch", "ran"], "waiter.err");
    await waitFor("the second step to wait", () => readFileSync(join(dir, "waiter.err"), "utf8").includes("waits for CPUs"), 60_000);
    expect(readFileSync(join(dir, "waiter.err"), "utf8")).toBe(`ebb: the step waits for CPUs (--exact): job ${id}'s exact steps hold 1 of its 1 CPUs (1 running); this step needs 1 CPU; it starts when one of them ends\n`);
    expect((await c.ebb(["cancel", String(id)])).code).toBe(0);
    expect(await waiter.exited).not.toBe(0);
    await holder.exited;
    expect(readFileSync(join(dir, "waiter.err"), "utf8")).toContain(`job ${id} cancelled: cancelled by user while the step waited for CPUs`);
    expect(existsSync(join(dir, "ran"))).toBe(false);
  }, 180_000);
});
