/**
 * The EPOP examples on a local cluster of 4 agents: Jacobi on EPOP gives the hand-written
 * example's checksum, fixed and resized; Cannon (square grids only) and Gaussian elimination
 * (row-block and block-cyclic) check their answer against a serial computation, and keep it when
 * resized in the middle.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, clusterForFile } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";

const BUN = process.execPath;
const EX = (name: string) => join(ROOT, "examples/epop", `${name}.ts`);

const c = clusterForFile({ agents: 4 });

/**
 * `ebb run` flags that pace an example (its --sleep) until `name`'s gate exists (EBB_TEST_PACE,
 * examples/epop/args.ts): slow while the test resizes it, at full speed once the test has.
 */
const gate = (name: string) => join(c.dir, `pace-${name}`);
const paced = (name: string) => ["--export", `ALL,EBB_TEST_PACE=${gate(name)}`];
const unpace = (name: string) => Bun.write(gate(name), "");

describe("jacobi on EPOP", () => {
  test("the same checksum as the hand-written example, on 3 ranks and resized 2 -> 4 -> 1", async () => {
    const iters = ["--rows", "96", "--cols", "64", "--iters", "2000"];
    const hand = await c.ebb(["run", "-N", "1", "--", BUN, join(ROOT, "examples/jacobi.ts"), ...iters]);
    expect(hand.code).toBe(0);
    const want = /checksum=(\w+) heat=(\S+)/.exec(hand.stdout)![0];
    const three = await c.ebb(["run", "-N", "3", "--", BUN, EX("jacobi"), ...iters]);
    expect(three.stderr).toBe("");
    expect(three.stdout).toContain(`ranks=3 ${want}`);

    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced("jacobi"), "--", BUN, EX("jacobi"), ...iters, "--sleep", "5", "--every", "20"], /iteration 20 on 2 ranks/);
    for (const n of [4, 1]) expect((await c.resize(job.id, n)).state).toBe("COMMITTED");
    await unpace("jacobi");
    const { out, err, code } = await job.finished;
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("now 4 ranks (was 2)");
    expect(out).toContain("now 1 ranks (was 4)");
    expect(out).toContain(`ranks=1 ${want}`);
  }, 240_000);
});

describe("cannon", () => {
  test("1 and 4 ranks: equal to the serial product; 1 -> 4 -> 1 while it runs, still equal", async () => {
    const args = ["--n", "30", "--iters", "4"];
    for (const n of ["1", "4"]) {
      const r = await c.ebb(["run", "-N", n, "--", BUN, EX("cannon"), ...args]);
      expect(r.stderr).toBe("");
      expect(r.stdout).toContain("cannon: check ok");
    }
    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced("cannon"), "--", BUN, EX("cannon"), "--n", "30", "--iters", "1000", "--sleep", "20"], /cannon: started/);
    for (const n of [4, 1]) expect((await c.resize(job.id, n)).state).toBe("COMMITTED");
    await unpace("cannon");
    const { out, err, code } = await job.finished;
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("now 4 ranks (2x2, was 1)");
    expect(out).toContain("now 1 ranks (1x1, was 4)");
    expect(out).toContain("cannon: check ok");
  }, 240_000);

  test("a non-square number of ranks is refused by name", async () => {
    const r = await c.ebb(["run", "-N", "2", "--", BUN, EX("cannon")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("cannon needs a square number of ranks, got 2");
  }, 120_000);
});

describe("gaussian elimination", () => {
  test("row-block and block-cyclic on 3 ranks equal the serial elimination; resized 2 -> 3 -> 1 too", async () => {
    for (const block of ["0", "1", "4"]) {
      const r = await c.ebb(["run", "-N", "3", "--", BUN, EX("ge"), "--n", "60", "--block", block]);
      expect(r.stderr).toBe("");
      expect(r.stdout).toContain("ge: check ok");
    }
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", ...paced("ge"), "--", BUN, EX("ge"), "--n", "300", "--block", "2", "--sleep", "40"], /ge: started/);
    for (const n of [3, 1]) expect((await c.resize(job.id, n)).state).toBe("COMMITTED");
    await unpace("ge");
    const { out, err, code } = await job.finished;
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("now 3 ranks (was 2)");
    expect(out).toContain("now 1 ranks (was 3)");
    expect(out).toContain("ge: check ok");
  }, 240_000);
});
