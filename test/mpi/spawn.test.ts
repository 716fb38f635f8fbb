/**
 * PMI spawn and the name service through the whole system, at the wire level (MPICH 4.0.2 with
 * ch4:ucx cannot open MPI ports here, so MPI_Comm_spawn itself cannot run): ranks speak the exact
 * MPICH strings through PmiClient.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { program } from "./programs.ts";

const BUN = process.execPath;
let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4 });
});
afterAll(async () => {
  await c?.stop();
});

const lines = (text: string, prefix: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith(`${prefix} `))
    .map((l) => JSON.parse(l.slice(prefix.length + 1)));

async function lastJob() {
  const { json } = await c.api("GET", "/v1/jobs?limit=1");
  return c.job(json.jobs[0].id);
}

describe("spawn (mcmd=spawn) onto new nodes", () => {
  test("2 children start on a node the job did not have, see PMI_SPAWNED=1 and the pre-put keys; the allocation grows, then shrinks back", async () => {
    const r = await c.ebb(["run", "-N", "1", "-n", "1", "--", BUN, program("spawner.ts"), program("spawned.ts")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [parent] = lines(r.stdout, "parent");
    expect(parent).toMatchObject({ rc: 0, codes: [0, 0] });
    const children = lines(r.stdout, "child").sort((a, b) => a.rank - b.rank);
    expect(children.map((k) => k.rank)).toEqual([0, 1]);
    for (const k of children) {
      expect(k).toMatchObject({ size: 2, spawned: true, env: "1", greeting: "hello-children", port: "tag#0$port#4711" });
      expect(k.node).not.toBe(parent.node);
    }
    const job = await lastJob();
    expect(job.state).toBe("COMPLETED");
    const held = [...new Set(job.allocationHistory.map((a: any) => a.node))];
    expect(held).toEqual([parent.node, children[0].node]);
    const kinds = job.events.map((e: any) => e.kind);
    expect(kinds).toContain("grown");
    expect(kinds).toContain("shrunk");
    expect(job.steps.map((s: any) => [s.stepId, s.state, s.nodes.length])).toEqual([
      [0, "COMPLETED", 1],
      [1, "COMPLETED", 1],
    ]);
    // Both the start and the spawn's grant were items of the scheduler's plans, carried out.
    expect(job.plans.map((i: any) => [i.kind, i.status, i.nodes, i.tasks])).toEqual([
      ["start", "done", [parent.node], null],
      ["spawn", "done", [children[0].node], 2],
    ]);
  });

  test("with no node free the spawn answers an error code when its wait runs out, and the job carries on", async () => {
    const busy = await c.submit({ argv: ["sleep", "60"], nodes: 3, exclusive: true });
    await c.waitJob(busy, ["RUNNING"]);
    const r = await c.ebb(["run", "-N", "1", "--spawn-wait", "1", "--", BUN, program("spawner.ts"), program("spawned.ts")]);
    await c.api("DELETE", `/v1/jobs/${busy}`);
    expect(r.code).toBe(0);
    const [parent] = lines(r.stdout, "parent");
    expect(parent.rc).toBe(-1);
    expect(parent.error).toMatch(/no.idle.nodes.for.2.new.processes.within.1.s/);
    expect(lines(r.stdout, "child")).toEqual([]);
    const job = await lastJob();
    expect(job.events.map((e: any) => e.kind)).not.toContain("grown");
  });
});

describe("name service", () => {
  test("publish, lookup and unpublish round-trip across the steps of one job", async () => {
    const names = (args: string) => `ebb run -n 1 ${BUN} ${program("names.ts")} ${args}`;
    writeFileSync(
      join(c.dir, "names.sh"),
      ["#!/bin/sh", names("publish ocean 'tag#0$port#4242'"), names("publish ocean again"), names("lookup ocean"), names("unpublish ocean"), names("lookup ocean"), names("unpublish ocean")].join("\n"),
    );
    const id = Number((await c.ebb(["submit", "--parsable", "names.sh"])).stdout.trim());
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    expect(c.read(`ebb-${id}.out`).trim().split("\n")).toEqual([
      "publish ocean -> true",
      "publish ocean -> false",
      'lookup ocean -> "tag#0$port#4242"',
      "unpublish ocean -> true",
      "lookup ocean -> null",
      "unpublish ocean -> false",
    ]);
  });

  test("names are per job: another job does not see them", async () => {
    writeFileSync(join(c.dir, "pub.sh"), `#!/bin/sh\nebb run -n 1 ${BUN} ${program("names.ts")} publish river p1\nebb run -n 1 ${BUN} ${program("names.ts")} lookup river\n`);
    writeFileSync(join(c.dir, "look.sh"), `#!/bin/sh\nebb run -n 1 ${BUN} ${program("names.ts")} lookup river\n`);
    const a = Number((await c.ebb(["submit", "--parsable", "pub.sh"])).stdout.trim());
    await c.waitJob(a, ["COMPLETED"]);
    const b = Number((await c.ebb(["submit", "--parsable", "look.sh"])).stdout.trim());
    await c.waitJob(b, ["COMPLETED"]);
    expect(c.read(`ebb-${a}.out`)).toContain('lookup river -> "p1"');
    expect(c.read(`ebb-${b}.out`).trim()).toBe("lookup river -> null");
  });
});

describe("spawn across a controller restart", () => {
  test("nodes grown for a spawned step are still released when it ends after the controller restarted", async () => {
    const own = await startCluster({ agents: 3, heartbeat: 0.5 });
    try {
      const parentHold = join(own.dir, "parent.go");
      const childHold = join(own.dir, "children.go");
      const run = own.ebbSpawn(["run", "-N", "1", "-n", "1", "--", BUN, program("spawner.ts"), program("spawned.ts"), parentHold, childHold]);
      const grown = await waitFor("the job to grow for the spawned step", async () => {
        const { json } = await own.api("GET", "/v1/jobs?limit=1");
        const job = json.jobs[0] && (await own.job(json.jobs[0].id));
        return job?.events.find((e: any) => e.kind === "grown") ? job : undefined;
      });
      expect(grown.allocation).toHaveLength(2);
      const childNode = grown.allocation[1] as string;

      own.controller.kill("SIGKILL");
      await own.controller.exited;
      await own.startController();
      await own.waitNodes(2, "ALLOCATED");

      writeFileSync(childHold, "");
      const shrunk = await waitFor("the spawned step's node to be released", async () => {
        const job = await own.job(grown.id);
        return job.events.some((e: any) => e.kind === "shrunk") ? job : undefined;
      });
      expect(shrunk.state).toBe("RUNNING");
      expect(shrunk.allocation).toEqual([grown.allocation[0]]);
      const nodes = (await own.api("GET", "/v1/nodes")).json.nodes;
      expect(nodes.find((n: any) => n.name === childNode).state).toBe("IDLE");

      writeFileSync(parentHold, "");
      expect(await run.exited).toBe(0);
      expect((await own.waitJob(grown.id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    } finally {
      await own.stop();
    }
  });
});
