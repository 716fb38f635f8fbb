/** Partitions and per-user limits (sched/partitions.ts, sched/quota.ts) with plain data. */
import { describe, expect, test } from "bun:test";
import { defaultTimeOf, inPartition, Partitions, partitionsSchema } from "../../src/sched/partitions.ts";
import { holdBack, submitLimit, type QuotaJob } from "../../src/sched/quota.ts";
import { resolveConfig } from "../../src/sched/config.ts";
import { makePlan, type Snapshot, type SnapshotJob } from "../../src/sched/plan.ts";

const parts = new Partitions([
  { name: "cpu", nodes: "n[1-4]" },
  { name: "gpu", nodes: "g[1-2]", default: true, maxTime: 3600, defaultTime: 600, maxNodes: 2, tier: 1, limits: { maxJobs: 1 } },
  { name: "all", nodes: "ALL", allowUsers: ["ann"], allowGroups: ["lab"] },
]);

describe("partitions", () => {
  test("the default is the one marked so; nodes by hostlist or ALL; overlapping allowed", () => {
    expect(parts.default?.name).toBe("gpu");
    expect(inPartition(parts.byName.get("cpu")!, "n3")).toBe(true);
    expect(inPartition(parts.byName.get("cpu")!, "g1")).toBe(false);
    expect(inPartition(parts.byName.get("all")!, "anything")).toBe(true);
    expect(new Partitions([{ name: "a", nodes: "ALL" }, { name: "b", nodes: "ALL" }]).default?.name).toBe("a");
  });

  test("resolve: the default when none is named; unknown and forbidden ones with the reason", () => {
    const none = () => [];
    expect(parts.resolve(undefined, "bob", none).partition?.name).toBe("gpu");
    expect(parts.resolve("tpu", "bob", none).error).toBe("partition tpu does not exist; the partitions are cpu, gpu, all (ebb partitions lists them)");
    expect(parts.resolve("all", "bob", none).error).toBe("user bob may not use partition all: only users ann and members of lab may; choose another with --partition (ebb partitions lists them)");
    expect(parts.resolve("all", "ann", none).partition?.name).toBe("all");
    expect(parts.resolve("all", "bob", () => ["users", "lab"]).partition?.name).toBe("all");
    expect(new Partitions().resolve(undefined, "bob", none)).toEqual({});
    expect(new Partitions().resolve("debug", "bob", none).error).toContain("this controller has no partitions");
  });

  test("a job's default time: the partition's default, else its maximum, else the controller's", () => {
    expect(defaultTimeOf(parts.byName.get("gpu"), 100)).toBe(600);
    expect(defaultTimeOf({ ...parts.byName.get("gpu")!, defaultTime: undefined }, 100)).toBe(3600);
    expect(defaultTimeOf(parts.byName.get("cpu"), 100)).toBe(100);
    expect(defaultTimeOf(undefined, 100)).toBe(100);
  });

  test("the config is checked: names, hostlists, one default, times in order, no unknown keys", () => {
    const bad = (x: unknown) => {
      const r = partitionsSchema.safeParse(x);
      return r.success ? "ok" : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    };
    expect(bad([{ name: "a", nodes: "n[1-2]" }])).toBe("ok");
    expect(bad([{ name: "a", nodes: "n[1-2" }])).toContain("0.nodes:");
    expect(bad([{ name: "a b", nodes: "ALL" }])).toContain("0.name:");
    expect(bad([{ name: "a", nodes: "ALL" }, { name: "a", nodes: "ALL" }])).toContain("partition a is defined twice");
    expect(bad([{ name: "a", nodes: "ALL", default: true }, { name: "b", nodes: "ALL", default: true }])).toContain("more than one partition is the default");
    expect(bad([{ name: "a", nodes: "ALL", defaultTime: 20, maxTime: 10 }])).toContain("defaultTime 20 is above maxTime 10");
    expect(bad([{ name: "a", nodes: "ALL", maxJobs: 1 }])).not.toBe("ok");
  });
});

describe("per-user limits", () => {
  const job = (id: number, user: string, extra: Partial<QuotaJob> = {}): QuotaJob => ({ id, user, cpus: 1, gpus: 0, nodes: 1, timeLimit: 60, minNodes: 1, ...extra });

  test("MaxJobs: the first waiting jobs in order take what the limit leaves, the rest wait with QOSMaxJobsPerUserLimit", () => {
    const held = holdBack([job(1, "a"), job(2, "a"), job(3, "b"), job(4, "a")], [{ user: "a", cpus: 1, gpus: 0, nodes: 1 }], { maxJobs: 2 }, new Map());
    expect([...held.keys()]).toEqual([2, 4]);
    expect(held.get(2)).toEqual({ reason: "QOSMaxJobsPerUserLimit", detail: "user a runs 2 job(s), the limit is 2 (MaxJobs)" });
  });

  test("cores, GPUs and nodes per user, each with its reason", () => {
    const none = new Map();
    expect(holdBack([job(1, "a", { cpus: 8 })], [{ user: "a", cpus: 4, gpus: 0, nodes: 1 }], { maxCpus: 10 }, none).get(1)?.reason).toBe("QOSMaxCpuPerUserLimit");
    expect(holdBack([job(1, "a", { gpus: 2 })], [{ user: "a", cpus: 1, gpus: 3, nodes: 1 }], { maxGpus: 4 }, none).get(1)?.reason).toBe("QOSMaxGRESPerUser");
    expect(holdBack([job(1, "a", { gpus: 0 })], [{ user: "a", cpus: 1, gpus: 9, nodes: 1 }], { maxGpus: 4 }, none).size).toBe(0);
    expect(holdBack([job(1, "a", { nodes: 3 })], [{ user: "a", cpus: 1, gpus: 0, nodes: 2 }], { maxNodes: 4 }, none).get(1)?.reason).toBe("QOSMaxNodePerUserLimit");
    expect(holdBack([job(1, "a", { nodes: 2 })], [{ user: "a", cpus: 1, gpus: 0, nodes: 2 }], { maxNodes: 4 }, none).size).toBe(0);
  });

  test("a partition's limits count the user's jobs in it only; its node and time bounds hold a job whatever the user runs", () => {
    const gpu = parts.byName;
    const running = [{ user: "a", partition: "cpu", cpus: 1, gpus: 0, nodes: 1 }];
    expect(holdBack([job(1, "a", { partition: "gpu" })], running, {}, gpu).size).toBe(0);
    const twice = holdBack([job(1, "a", { partition: "gpu" }), job(2, "a", { partition: "gpu" })], running, {}, gpu);
    expect(twice.get(2)).toEqual({ reason: "QOSMaxJobsPerUserLimit", detail: "user a in partition gpu runs 1 job(s), the limit is 1 (MaxJobs)" });
    expect(holdBack([job(1, "b", { partition: "gpu", minNodes: 3, nodes: 3 })], [], {}, gpu).get(1)).toEqual({ reason: "PartitionNodeLimit", detail: "it needs 3 nodes, partition gpu allows 2 per job" });
    expect(holdBack([job(1, "b", { partition: "gpu", timeLimit: 7200 })], [], {}, gpu).get(1)?.reason).toBe("PartitionTimeLimit");
  });

  test("no limits: nothing is held back", () => {
    expect(holdBack([job(1, "a"), job(2, "a")], [], {}, new Map()).size).toBe(0);
  });

  test("MaxSubmitJobs at submit: on the cluster and in the partition, an array counting each task", () => {
    const gpu = { ...parts.byName.get("gpu")!, limits: { maxSubmitJobs: 3 } };
    expect(submitLimit({ all: 1, inPartition: 1 }, 1, { maxSubmitJobs: 2 }, undefined, "a")).toBeUndefined();
    expect(submitLimit({ all: 2, inPartition: 0 }, 1, { maxSubmitJobs: 2 }, undefined, "a")).toBe("user a has 2 job(s) pending or running, this one would pass the limit of 2 (MaxSubmitJobs); wait for some to end, or submit fewer");
    expect(submitLimit({ all: 5, inPartition: 1 }, 3, {}, gpu, "a")).toContain("in partition gpu, these 3 would pass the limit of 3");
  });
});

describe("a running job's partition in a pass", () => {
  const running = (exclude?: string[]): SnapshotJob => ({ id: 1, nodes: 1, nodeNames: ["n1"], minNodes: 1, maxNodes: 1, elastic: false, submitTime: 0, startTime: 0, timeLimit: 100, expectedEnd: 100_000, samples: [], adapting: false, ...(exclude ? { exclude } : {}) });
  for (const mode of ["whole nodes", "resources"] as const) {
    test(`${mode}: a spawn grant never gives a node the job excludes (those outside its partition)`, () => {
      const resources = mode === "resources" ? { cores: 1, memMiB: 1024, gpus: [], features: [] } : undefined;
      const nodes = ["n1", "n2", "n3"].map((name) => ({ name, up: true, ...(resources ? { resources } : {}), ...(name === "n1" && !resources ? { jobId: 1 } : {}) }));
      const snap = (exclude?: string[]): Snapshot => {
        const r = running(exclude);
        return { now: 0, nodes, pending: [], running: [resources ? { ...r, shares: [{ node: "n1", cores: [0], memMiB: 1024, gpus: [] }] } : r], spawns: [{ id: 7, jobId: 1, tasks: 1 }], config: resolveConfig({ policy: "easy" }) };
      };
      expect(makePlan(snap()).spawns.map((g) => g.nodes)).toEqual([["n2"]]);
      expect(makePlan(snap(["n2"])).spawns.map((g) => g.nodes)).toEqual([["n3"]]);
    });
  }
});
