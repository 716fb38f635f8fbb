/**
 * The EPOP driver (runEpop) through the real system: 4 agents as processes, an EPOP program whose
 * elastic phase is resized 2 -> 4 -> 3 -> 1 nodes by the API; its final data equals a fixed-size
 * run's bit for bit, joining ranks start at the phase and iteration the staying ranks were at, and
 * an error in a phase fails the job with the phase and the rank named.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterForFile, waitFor } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";

const BUN = process.execPath;
const PROGRAM = join(import.meta.dir, "programs/epop-sum.ts");

const c = clusterForFile({ agents: 4 });

describe("runEpop under resizes", () => {
  test("an elastic phase adapted 2 -> 4 -> 3 -> 1: final data equals a fixed-size run; joiners enter at the stayers' phase and iteration", async () => {
    const stop = join(c.dir, "epop-stop");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, PROGRAM, "--stop-file", stop, "--sleep", "2"], /sweep 50 on 2/);
    for (const n of [4, 3, 1]) {
      const a = await c.resize(job.id, n);
      expect([a.state, a.toNodes]).toEqual(["COMMITTED", n]);
    }
    writeFileSync(stop, "");
    const { out, err, code } = await job.finished;
    expect(err).toBe("");
    expect(code).toBe(0);
    const done = /done sweeps=(\d+) ranks=1 checksum=(\w+)/.exec(out)!;
    expect(done).not.toBeNull();

    // Every window opened in the sweep (pc 2); the grow 2 -> 4 started two ranks, which entered there.
    const windows = [...out.matchAll(/window pc=(\d+) iteration=(\d+) (\d+)->(\d+)/g)].map((m) => m.slice(1).map(Number));
    expect(windows.map((w) => [w[0], w[2], w[3]])).toEqual([[2, 2, 4], [2, 4, 3], [2, 3, 1]]);
    const joined = [...out.matchAll(/joined rank=(\d+) pc=(\d+) iteration=(\d+)/g)].map((m) => m.slice(1).map(Number)).sort((a, b) => a[0]! - b[0]!);
    expect(joined).toEqual([
      [2, 2, windows[0]![1]!],
      [3, 2, windows[0]![1]!],
    ]);
    // Windows come in iteration order.
    expect(windows[0]![1]!).toBeLessThanOrEqual(windows[1]![1]!);
    expect(windows[1]![1]!).toBeLessThanOrEqual(windows[2]![1]!);

    const fixed = await c.ebb(["run", "-N", "1", "--", BUN, PROGRAM, "--iters", done[1]!]);
    expect(fixed.stderr).toBe("");
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain(`done sweeps=${done[1]} ranks=1 checksum=${done[2]}`);
    const detail = await c.job(job.id);
    expect(detail.state).toBe("COMPLETED");
    expect(detail.adaptations.map((a: any) => [a.fromRanks, a.toRanks, a.state])).toEqual([
      [2, 4, "COMMITTED"],
      [4, 3, "COMMITTED"],
      [3, 1, "COMMITTED"],
    ]);
  }, 240_000);

  test("a fixed run on 3 nodes gives the same bits as on 1", async () => {
    const [one, three] = [await c.ebb(["run", "-N", "1", "--", BUN, PROGRAM, "--iters", "37"]), await c.ebb(["run", "-N", "3", "--", BUN, PROGRAM, "--iters", "37"])];
    expect([one.code, three.code]).toEqual([0, 0]);
    const sum = (s: string) => /checksum=(\w+)/.exec(s)?.[1];
    expect(sum(three.stdout)).toBeDefined();
    expect(sum(three.stdout)).toBe(sum(one.stdout));
  }, 120_000);
});

describe("structure and progress to the controller", () => {
  test("ebb show lists the phases with a marker at the current one and a progress bar; the API has pc, iteration, bound and time left; a controller restart keeps them", async () => {
    const JACOBI = join(import.meta.dir, "../../examples/epop/jacobi.ts");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", BUN, JACOBI, "--rows", "64", "--cols", "64", "--iters", "100000", "--sleep", "2", "--every", "100"], /iteration 100 on 2 ranks/);
    const p = await waitFor("the program's progress in the job", async () => {
      const j = await c.job(job.id);
      return j.program?.iteration > 100 && j.program.remainingSeconds !== null ? j.program : undefined;
    }, 60_000);
    expect(p.name).toBe("jacobi");
    expect(p.phases).toEqual([
      { pc: 0, name: "init", kind: "init" },
      { pc: 1, name: "relax", kind: "elastic" },
      { pc: 2, name: "report", kind: "rigid" },
    ]);
    expect([p.pc, p.bound]).toEqual([1, 100000]);
    expect(p.remainingSeconds).toBeGreaterThan(0);
    const show = (await c.ebb(["show", String(job.id)])).stdout;
    expect(show).toContain("Program jacobi (EPOP):");
    expect(show).toMatch(/> +1 +elastic +relax +\[[#.]{20}\] \d+\/100000/);
    expect(show).toMatch(/^ {5}2 +rigid +report$/m);

    // The progress is kept with the job: a restarted controller still has the structure (which
    // the program sends only once, at its start) and the phase it was in.
    const before = (await c.job(job.id)).program;
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    const after = (await c.job(job.id)).program;
    expect(after?.name).toBe("jacobi");
    expect(after.phases).toEqual(p.phases);
    expect(after.pc).toBe(1);
    expect(after.iteration).toBeGreaterThanOrEqual(before.iteration);
    await waitFor("the job's time left after the restart", async () => (await c.job(job.id)).program?.remainingSeconds > 0, 60_000);
    await c.api("DELETE", `/v1/jobs/${job.id}`);
    await job.finished;
  }, 180_000);
});

describe("errors", () => {
  test("an exception in a phase fails the job; stderr names the program, phase, counter, iteration and rank", async () => {
    const r = await c.ebb(["run", "-N", "2", "--", BUN, PROGRAM, "--iters", "30", "--fail", "sweep:5:1"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('epop: epop-sum: phase "sweep" (pc 2, exec, iteration 5) failed on rank 1: injected failure at sweep:5');
    const jobs = (await c.api("GET", "/v1/jobs?state=FAILED")).json.jobs;
    expect(jobs.length).toBeGreaterThan(0);
  }, 120_000);
});
