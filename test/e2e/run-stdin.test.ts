/**
 * `ebb run`'s standard input reaches its step's ranks as mpiexec's and srun's does: rank 0 by
 * default, every rank with --input all (srun's default), none with --input none; in pieces the
 * agents acknowledge, so a rank that reads slowly or stops reading holds back ebb run, not memory.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterForFile } from "../support/cluster.ts";
import { LINE_HELD_MAX } from "../../src/roles/launcher/output.ts";

const c = clusterForFile({ agents: 2, cpus: 2 });

/** 300,000 bytes that are not text: more than the agents' window of 4 × 64 KiB, crossing piece bounds. */
const INPUT = new Uint8Array(300_000).map((_, i) => (i * 7919) % 251);
const SHA = createHash("sha256").update(INPUT).digest("hex");

/** Each rank prints its rank, the bytes it read and their sha256. */
const PROBE = ["sh", "-c", 'echo "rank=$EBB_PROCID $(sha256sum | cut -c1-64)"'];
const EMPTY = createHash("sha256").digest("hex");

function readsOf(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/rank=(\d+) ([0-9a-f]{64})/g)].map((m) => [m[1]!, m[2]!]));
}

test("rank 0 reads ebb run's standard input by default, whole and unchanged; the other ranks read /dev/null", async () => {
  const r = await c.ebb(["run", "-N", "2", "-n", "4", ...PROBE], { stdin: INPUT });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(readsOf(r.stdout)).toEqual({ "0": SHA, "1": EMPTY, "2": EMPTY, "3": EMPTY });
});

test("--input all gives every rank the whole input; --input RANK one rank, on any node; --input none nobody", async () => {
  const all = await c.ebb(["run", "-N", "2", "-n", "4", "--input", "all", ...PROBE], { stdin: INPUT });
  expect(all.code).toBe(0);
  expect(readsOf(all.stdout)).toEqual({ "0": SHA, "1": SHA, "2": SHA, "3": SHA });
  const three = await c.ebb(["run", "-N", "2", "-n", "4", "-i", "3", ...PROBE], { stdin: INPUT });
  expect(three.code).toBe(0);
  expect(readsOf(three.stdout)).toEqual({ "0": EMPTY, "1": EMPTY, "2": EMPTY, "3": SHA });
  const none = await c.ebb(["run", "-N", "2", "-n", "2", "--input=none", ...PROBE], { stdin: INPUT });
  expect(none.code).toBe(0);
  expect(readsOf(none.stdout)).toEqual({ "0": EMPTY, "1": EMPTY });
});

test("-m cyclic: --input RANK reaches that rank on the node cyclic puts it (rank 2 on the first node), --input all every rank", async () => {
  const two = await c.ebb(["run", "-N", "2", "-n", "4", "-m", "cyclic", "-i", "2", "sh", "-c", 'echo "rank=$EBB_PROCID $(sha256sum | cut -c1-64) node=$EBB_NODEID"'], { stdin: INPUT });
  expect(two.code).toBe(0);
  expect(readsOf(two.stdout)).toEqual({ "0": EMPTY, "1": EMPTY, "2": SHA, "3": EMPTY });
  expect(two.stdout).toContain(`rank=2 ${SHA} node=0`);
  const all = await c.ebb(["run", "-N", "2", "-n", "4", "-m", "cyclic", "--input", "all", ...PROBE], { stdin: INPUT });
  expect(all.code).toBe(0);
  expect(readsOf(all.stdout)).toEqual({ "0": SHA, "1": SHA, "2": SHA, "3": SHA });
});

test("a rank that stops reading ends the step as it would alone: ebb run stops reading an endless input", async () => {
  const run = c.ebbSpawn(["run", "-n", "1", "head", "-c", "5"], { stdin: "pipe" });
  // Written until the run ends: far more than a pipe and the window hold.
  let open = true;
  const chunk = new TextEncoder().encode("y\n".repeat(32768));
  const writer = (async () => {
    while (open) {
      try {
        run.stdin.write(chunk);
        await run.stdin.flush();
      } catch {
        return;
      }
    }
  })();
  const [out, code] = await Promise.all([new Response(run.stdout).text(), run.exited]);
  open = false;
  await writer;
  expect(code).toBe(0);
  expect(out).toBe("y\ny\ny");
});

test("srun in a batch script: every task reads srun's standard input (srun's default), here a file the script redirects", async () => {
  writeFileSync(join(c.dir, "in.bin"), INPUT);
  const script = `#!/bin/sh\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH -o srun-in.out\nsrun ${PROBE.slice(0, 2).join(" ")} '${PROBE[2]}' < in.bin\nsrun --input none sh -c 'wc -c'\n`;
  writeFileSync(join(c.dir, "in.sh"), script);
  const sub = await c.ebb(["submit", "--parsable", "in.sh"]);
  expect(sub.code).toBe(0);
  const end = await c.waitJob(Number(sub.stdout.trim()), ["COMPLETED", "FAILED", "CANCELLED"]);
  const out = c.read("srun-in.out");
  expect(end.state, out).toBe("COMPLETED");
  expect(readsOf(out)).toEqual({ "0": SHA, "1": SHA });
  expect(out.match(/^\s*0$/gm)?.length).toBe(2);
});

test("a rank --input names that the step does not have is refused before anything runs; a bad --input is a usage error", async () => {
  const far = await c.ebb(["run", "-n", "2", "--input", "2", "true"]);
  expect(far.code).toBe(1);
  expect(far.stderr).toContain("--input 2: the step has 2 ranks (0 to 1); name one of them, all, or none");
  const bad = await c.ebb(["run", "--input", "first", "true"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("--input first: expected a rank number, all or none");
});

/** Resident memory of the agent `name` (its own process), in bytes. */
function agentRss(name: string): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${c.agents.get(name)!.pid}/status`, "utf8"))?.[1];
  if (kb === undefined) throw new Error(`agent ${name} has exited`);
  return Number(kb) * 1024;
}

test("output: a launcher read slowly holds its ranks back, through a tree node too; every line arrives, in order, and the agents' memory stays bounded", async () => {
  // Each rank writes ~17 MB (rank 1 numbers from 100,000,001), both through node01's connection
  // (rank 1 is on node02, under node01 by --fanout 1): more than a socket's queue of 16 MiB.
  const LINES = 2_000_000;
  const rss = () => ({ node01: agentRss("node01"), node02: agentRss("node02") });
  const before = rss();
  const peak = { ...before };
  const run = c.ebbSpawn(["run", "-N", "2", "-n", "2", "--fanout", "1", "sh", "-c", `seq $((EBB_PROCID * 100000000 + 1)) $((EBB_PROCID * 100000000 + ${LINES}))`]);
  // The launcher's output is read at 4 MB/s: its writes block, and the ranks must wait.
  const chunks: Uint8Array[] = [];
  let sampled = 0;
  for await (const chunk of run.stdout) {
    chunks.push(chunk);
    await Bun.sleep(chunk.length / 4000);
    if (Date.now() - sampled < 200) continue;
    sampled = Date.now();
    const now = rss();
    peak.node01 = Math.max(peak.node01, now.node01);
    peak.node02 = Math.max(peak.node02, now.node02);
  }
  const [err, code] = await Promise.all([new Response(run.stderr).text(), run.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  const next = [1, 100_000_001];
  let bad = 0;
  for (const line of Buffer.concat(chunks).toString().split("\n")) {
    if (!line) continue;
    const n = Number(line);
    const rank = n > 100_000_000 ? 1 : 0;
    if (n !== next[rank]) bad++;
    next[rank] = n + 1;
  }
  expect({ bad, next }).toEqual({ bad: 0, next: [LINES + 1, 100_000_001 + LINES] });
  const growth = { node01: peak.node01 - before.node01, node02: peak.node02 - before.node02 };
  expect(Math.max(growth.node01, growth.node02), JSON.stringify(growth)).toBeLessThan(64 << 20);
});

test("a rank writing 4 MiB without a newline: ebb run writes it in pieces while the rank still runs (it holds at most LINE_HELD_MAX of a line), every byte in order", async () => {
  const dir = c.dir;
  const go = join(dir, "long-line.go");
  const script = `head -c ${4 << 20} /dev/zero | tr '\\0' x; while [ ! -e ${go} ]; do sleep 0.1; done; echo end`;
  const run = c.ebbSpawn(["run", "-n", "1", "sh", "-c", script]);
  const reader = run.stdout.getReader();
  let got = "";
  // Before the cap the launcher held the whole unfinished line until the rank ended, so this never returned.
  while (got.length < (4 << 20) - LINE_HELD_MAX) {
    const { value, done } = await reader.read();
    if (done) break;
    got += new TextDecoder().decode(value);
  }
  expect(got.length).toBeGreaterThanOrEqual((4 << 20) - LINE_HELD_MAX);
  writeFileSync(go, "");
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    got += new TextDecoder().decode(value);
  }
  expect(await run.exited).toBe(0);
  expect(got.length).toBe((4 << 20) + 4);
  expect(got).toBe(`${"x".repeat(4 << 20)}end\n`);
});
