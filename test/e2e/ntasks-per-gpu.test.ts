/**
 * Slurm's --ntasks-per-gpu on a node of 4 (declared) GPUs: the tasks a GPU count implies, the GPUs
 * a task count implies, and each task shown one of its job's GPUs, N tasks to a GPU; through
 * sbatch + srun, and ebb run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestCluster } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = new TestCluster({ agents: 0 });
  await c.startController();
  c.startAgent("g1", ["--cpus", "8", "--gres", "gpu:4"]);
  await c.waitNodes(1, "IDLE", 90_000);
});
afterAll(async () => {
  await c?.stop();
});

const PROBE = 'echo "task=$SLURM_PROCID local=$SLURM_LOCALID ebb=$EBB_GPUS cuda=$CUDA_VISIBLE_DEVICES ntasks=$SLURM_NTASKS"';
const tasksOf = (out: string) =>
  [...out.matchAll(/task=(\d+) local=(\d+) ebb=(\S*) cuda=(\S*) ntasks=(\d+)/g)].map((m) => ({ task: Number(m[1]), local: Number(m[2]), ebb: m[3]!, cuda: m[4]!, ntasks: Number(m[5]) })).sort((a, b) => a.task - b.task);

test("sbatch --gpus=2 --ntasks-per-gpu=2: 4 tasks, two to each of the job's 2 GPUs", async () => {
  writeFileSync(join(c.dir, "pergpu.sh"), ["#!/bin/bash", "#SBATCH --gpus=2", "#SBATCH --ntasks-per-gpu=2", "#SBATCH -o pergpu-%j.out", 'echo "job=$SLURM_NTASKS_PER_GPU $SLURM_NTASKS $EBB_GPUS"', `srun sh -c '${PROBE}'`].join("\n") + "\n");
  const sub = await c.ebb(["submit", "pergpu.sh"]);
  expect(sub.stderr).toBe("");
  const id = Number(/Submitted batch job (\d+)/.exec(sub.stdout)?.[1]);
  const job = await c.waitJob(id, ["COMPLETED", "FAILED"], 120_000);
  const out = readFileSync(join(c.dir, `pergpu-${id}.out`), "utf8");
  expect(job.state, out).toBe("COMPLETED");
  const gpus: number[] = job.shares[0].gpus;
  expect(gpus).toHaveLength(2);
  expect(out).toContain(`job=2 4 ${gpus.join(",")}`);
  const tasks = tasksOf(out);
  expect(tasks.map((t) => [t.task, t.local, t.ebb, t.cuda, t.ntasks])).toEqual([0, 1, 2, 3].map((i) => [i, i, String(gpus[Math.floor(i / 2)]), String(gpus[Math.floor(i / 2)]), 4]));
});

test("ebb run -n 3 --ntasks-per-gpu 2: 2 GPUs for 3 tasks, shown one each (two to the first); without it, each task sees all of its job's", async () => {
  const r = await c.ebb(["run", "-n", "3", "--ntasks-per-gpu", "2", "sh", "-c", PROBE]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const tasks = tasksOf(r.stdout);
  expect(tasks).toHaveLength(3);
  const [a, b] = [tasks[0]!.ebb, tasks[2]!.ebb];
  expect(a).not.toBe(b);
  expect(tasks.map((t) => t.ebb)).toEqual([a, a, b]);
  // Without --ntasks-per-gpu a task sees its job's GPUs, all of them.
  const all = await c.ebb(["run", "-n", "2", "--gpus", "2", "sh", "-c", PROBE]);
  expect(all.code).toBe(0);
  const both = tasksOf(all.stdout).map((t) => t.ebb);
  expect(both[0]).toMatch(/^\d,\d$/);
  expect(both[1]).toBe(both[0]);
});
