import { describe, expect, test } from "bun:test";
import { AgentToController, agentToControllerShapes, controllerToAgentShapes, ControllerToAgent } from "../../src/proto/agent.ts";
import { fastAgentToController, fastControllerToAgent } from "../../src/proto/agent-fast.ts";
import { decode } from "../../src/proto/channel.ts";
import { tagged } from "../../src/proto/tagged.ts";
import { describeIssues } from "../../src/util/zod.ts";

/** The same union parsed by its zod schemas alone. */
const byZod = tagged(controllerToAgentShapes);
const sha = (c: string) => c.repeat(64);

const nullJob = {
  t: "job.start",
  job: {
    id: 1, user: "root", kind: "command", name: "true", argv: ["true"], env: {}, cwd: "/tmp/b", output: "/dev/null",
    nodes: [{ name: "node01", addr: "127.0.0.1:34941" }], tasks: [1],
    jobEnv: { EBB_JOB_ID: "1", SLURM_JOB_ID: "1", SLURM_JOB_NODELIST: "node01" }, sampleInterval: 60,
    cred: { jobId: 1, stepId: 0, nodes: ["node01"], expires: 1796042933697, argv: sha("a"), env: sha("b"), jobEnv: sha("c"), cwd: "/tmp/b", output: sha("d"), sig: sha("e") },
    run: 0,
  },
};
const batchJob = {
  t: "job.start",
  job: { id: 7, kind: "batch", name: "s", script: "#!/bin/sh\ntrue\n", args: ["a b", ""], env: { A: "1" }, cwd: "/", output: "o", error: "e", nodes: [{ name: "a", addr: "b" }, { name: "c", addr: "d" }], tasks: [2, 0], jobEnv: {}, user: "u", run: 3, append: true },
};
const bases = [
  nullJob,
  batchJob,
  { t: "shares", jobs: [] },
  { t: "shares", jobs: [{ jobId: 1, user: "root", share: { cores: [0, 3], memMiB: 11449, gpus: [] } }, { jobId: 2, user: null, share: { cores: [], memMiB: 0, gpus: [1] } }] },
  { t: "job.kill", jobId: 1, signal: "SIGKILL" },
  { t: "job.kill", jobId: 9, signal: "SIGTERM", reason: "completed", confirm: true },
  { t: "job.ack", jobId: 3 },
];

/** Values put in place of each field, and objects' keys added or removed. */
const others: unknown[] = [null, "", "x", -1, 0, -0, 1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, true, [], ["x"], [0], {}, sha("a"), sha("A"), "SIGHUP", "batch", { name: "n", addr: "a" }];
const DELETE = Symbol("delete");

/** Every message that differs from `m` in one place: each value at any depth replaced, each key deleted, an unknown key added. */
function* variants(m: unknown): Generator<unknown> {
  if (Array.isArray(m)) {
    for (let i = 0; i < m.length; i++) for (const v of [...others, DELETE].concat([...variants(m[i])] as never[])) yield v === DELETE ? m.filter((_, j) => j !== i) : m.map((x, j) => (j === i ? v : x));
    yield [...m, ...m.slice(0, 1)];
    return;
  }
  if (typeof m !== "object" || m === null) return;
  const o = m as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k === "t") continue;
    for (const v of [...others, DELETE, undefined, ...variants(o[k])]) {
      const copy = { ...o };
      if (v === DELETE) delete copy[k];
      else copy[k] = v;
      yield copy;
    }
  }
  yield { ...o, unknown: 1 };
  yield { ...o, elastic: { minNodes: 1, maxNodes: 2, sampleInterval: 1 } };
}


type Parser = { safeParse(m: unknown): { success: boolean; data?: unknown; error?: unknown } };

/**
 * Every variant of every base through the hand check `fast` (by kind), the kind's zod schema `byKind`
 * and the whole union `union` (which tries the hand check first): what the hand check accepts zod
 * accepts alike, with the same result in the same key order; the union accepts and refuses as zod
 * does, with zod's words. Counts the accepted and refused variants.
 */
function agreeWithZod(bases: readonly { t: string }[], fast: (t: string, m: unknown) => unknown, byKind: Parser, union: Parser): { accepted: number; refused: number } {
  let accepted = 0;
  let refused = 0;
  for (const base of bases)
    for (const m of variants(base)) {
      const got = fast(base.t, m);
      const z = byKind.safeParse(m);
      const both = union.safeParse(m);
      if (got !== undefined) {
        accepted++;
        expect({ m, ok: z.success }).toEqual({ m, ok: true });
        expect(got).toEqual(z.data as never);
        expect(JSON.stringify(got)).toBe(JSON.stringify(z.data));
      }
      expect(both.success).toBe(z.success);
      if (!z.success) {
        refused++;
        expect(describeIssues(both.error as never)).toBe(describeIssues(z.error as never));
      }
    }
  return { accepted, refused };
}

describe("the agent's hand-checked messages (agent-fast.ts)", () => {
  test("each valid message parses to what its zod schema makes of it, keys in the same order", () => {
    for (const m of bases) {
      const z = byZod.safeParse(m);
      expect(z.success).toBe(true);
      const fast = fastControllerToAgent[m.t as keyof typeof fastControllerToAgent](m);
      expect(fast).toEqual(z.data as never);
      expect(JSON.stringify(fast)).toBe(JSON.stringify(z.data));
    }
  });

  test("what they accept, zod accepts alike; what zod refuses is refused with zod's words", () => {
    const { accepted, refused } = agreeWithZod(bases, (t, m) => fastControllerToAgent[t as keyof typeof fastControllerToAgent](m as never), byZod, ControllerToAgent);
    // Both kinds of case were reached: unknown keys and harmless values are accepted, wrong ones refused.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(500);
  });

  test("their length limits are the schemas'", () => {
    const entry = (cores: number, gpus: number) => ({ jobId: 1, user: null, share: { cores: Array(cores).fill(0), memMiB: 0, gpus: Array(gpus).fill(0) } });
    const shares = (n: number, cores = 0, gpus = 0) => ({ t: "shares", jobs: Array.from({ length: n }, () => entry(cores, gpus)) });
    for (const m of [shares(4096), shares(1, 65536), shares(1, 0, 1024)]) expect(fastControllerToAgent.shares(m)).toEqual(byZod.safeParse(m).data as never);
    for (const m of [shares(4097), shares(1, 65537), shares(1, 0, 1025)]) {
      expect(fastControllerToAgent.shares(m)).toBeUndefined();
      expect(byZod.safeParse(m).success).toBe(false);
    }
  });

  test("a refusal still names the field", () => {
    const bad = { ...nullJob, job: { ...nullJob.job, cred: { ...nullJob.job.cred, env: "zz" } } };
    expect(decode(ControllerToAgent, JSON.stringify(bad))).toEqual({ ok: false, error: "job.cred.env: must be a sha256 in hex" });
    expect(decode(ControllerToAgent, JSON.stringify({ t: "shares", jobs: [{ jobId: 0, user: null, share: { cores: [], memMiB: 0, gpus: [] } }] }))).toMatchObject({ ok: false, error: expect.stringMatching(/^jobs\.0\.jobId: /) });
  });
});

describe("the controller's hand-checked messages from agents (agent-fast.ts)", () => {
  const upZod = tagged(agentToControllerShapes);
  const ups = [
    { t: "job.exit", jobId: 1, exitCode: 0, usage: { cpuSec: 0.002, peakMemMiB: 1.5, oomKills: 0 }, gone: true },
    { t: "job.exit", jobId: 7, exitCode: -9, message: "killed by SIGKILL", lostNode: "node02", run: 2 },
    { t: "job.cleaned", jobId: 3 },
    { t: "job.usage", jobId: 4, cpuSec: 1.25, peakMemMiB: 300, oomKills: 1 },
    { t: "heartbeat", jobs: [] },
    { t: "heartbeat", jobs: [1, 2] },
  ];
  const fastOf = (t: string) => fastAgentToController[t as keyof typeof fastAgentToController] as (m: unknown) => unknown;

  test("each valid message parses to what its zod schema makes of it, keys in the same order", () => {
    for (const m of ups) {
      const z = upZod.safeParse(m);
      expect(z.success).toBe(true);
      expect(fastOf(m.t)(m)).toEqual(z.data as never);
      expect(JSON.stringify(fastOf(m.t)(m))).toBe(JSON.stringify(z.data));
    }
  });

  test("what they accept, zod accepts alike; what zod refuses is refused with zod's words", () => {
    const { accepted, refused } = agreeWithZod(ups, (t, m) => fastOf(t)(m), upZod, AgentToController);
    expect(accepted).toBeGreaterThan(40);
    expect(refused).toBeGreaterThan(200);
  });
});
