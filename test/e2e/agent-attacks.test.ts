/**
 * Agents that cannot be frozen: PMI floods from a rank that never reads its replies, and hundreds
 * of idle connections to the step port, beside a real MPI job on the same node; and ranks that
 * die with their agent (those that left their process group too).
 */
import { afterEach, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { compileMpi } from "../support/mpi.ts";
import { pidAlive, startCluster, type TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** Two ranks: rank 0 says it is ready, then both wait in a barrier until the go file exists. */
const WAITER = `
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    FILE *f = fopen(argv[1], "w");
    if (f) fclose(f);
    while (access(argv[2], F_OK) != 0) usleep(50000);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank=%d size=%d sum=%d\\n", rank, size, sum);
  MPI_Finalize();
  return 0;
}
`;
const waiter = await compileMpi("waiter", WAITER);

/** 4.2 MB of valid PMI-1 requests, never reading a reply. */
const PMI1_FLOOD = `printf 'cmd=init pmi_version=1 pmi_subversion=1\\n' >&$PMI_FD
yes cmd=get_maxes | head -c 4200000 >&$PMI_FD
exec sleep 120
`;
/** 50,000 valid PMI-2 frames, never reading a reply. */
const PMI2_FLOOD = `printf 'cmd=init pmi_version=2 pmi_subversion=0\\n000023cmd=fullinit;pmirank=0;' >&$PMI_FD
awk 'BEGIN { for (i = 0; i < 50000; i++) printf "000014cmd=job-getid;" }' >&$PMI_FD
exec sleep 120
`;

test.skipIf(!waiter)("two PMI floods and 300 idle connections beside an MPI job: the MPI job completes, the node stays UP, the floods fail naming the cause", async () => {
  // 1 s heartbeats: the node may miss none of 3 s while flooded (unfixed, the agent froze ~70 s); at
  // 0.5 s, a loaded 2-core CI machine alone could keep the agent off a core for 1.5 s (seen at load 34).
  c = await startCluster({ agents: 1, cpus: 8, heartbeat: 1 });
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  const [ready, go, opened] = ["mpi-ready", "mpi-go", "idle-opened"].map((f) => join(c!.dir, f));
  await Bun.write(join(c.dir, "flood1.sh"), PMI1_FLOOD);
  await Bun.write(join(c.dir, "flood2.sh"), PMI2_FLOOD);
  const script = `#!/bin/sh
while [ ! -f ${opened} ]; do sleep 0.1; done
ebb run -n 2 ${waiter} ${ready} ${go} > mpi.out 2> mpi.err &
mpi=$!
while [ ! -f ${ready} ]; do sleep 0.1; done
ebb run -n 1 sh flood1.sh > flood1.out 2> flood1.err; echo "flood1 $?" >> results
ebb run -n 1 sh flood2.sh > flood2.out 2> flood2.err; echo "flood2 $?" >> results
touch ${go}
wait $mpi; echo "mpi $?" >> results
`;
  const id = await c.submit({ script, nodes: 1, exclusive: true, timeLimit: 300 });
  await c.waitJob(id, ["RUNNING"]);

  // 300 idle connections to the agent's step port: half never send a byte, half open a WebSocket and say nothing.
  const [host, port] = [node.addr.slice(0, node.addr.lastIndexOf(":")), Number(node.addr.slice(node.addr.lastIndexOf(":") + 1))];
  const closed: Promise<void>[] = [];
  const raw: Socket[] = [];
  for (let i = 0; i < 150; i++) {
    const s = connect({ host, port });
    s.on("error", () => {});
    raw.push(s);
    closed.push(new Promise((resolve) => s.on("close", () => resolve())));
  }
  for (let i = 0; i < 150; i++) {
    const ws = new WebSocket(`ws://${node.addr}/v1/step`);
    closed.push(new Promise((resolve) => ws.addEventListener("close", () => resolve())));
  }
  await Bun.write(opened!, "");

  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 240_000);
  const results = c.read("results");
  if (done.state !== "COMPLETED") console.log(["mpi.out", "mpi.err", "flood1.out", "flood1.err", "flood2.err", `ebb-${id}.out`].map((f) => `--- ${f}\n${c!.read(f)}`).join("\n"), c.daemonLogs().slice(-4000));
  expect({ state: done.state, results }).toEqual({ state: "COMPLETED", results: expect.stringContaining("mpi 0") });
  expect(c.read("mpi.out").split("\n").sort().filter(Boolean)).toEqual(["rank=0 size=2 sum=1", "rank=1 size=2 sum=1"]);
  // Each flood failed its own step, with the reason.
  expect(results).toMatch(/flood1 [1-9]/);
  expect(results).toMatch(/flood2 [1-9]/);
  expect(c.read("flood1.err")).toContain("does not read its replies");
  expect(c.read("flood2.err")).toContain("does not read its replies");
  // The node never went DOWN.
  const after = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  expect(after.state).not.toBe("DOWN");
  expect((await c.job(id)).events.map((e: any) => e.kind)).not.toContain("node_fail");
  // Every idle connection was closed by the agent.
  await Promise.race([Promise.all(closed), waitFor("the idle connections to be closed", () => false, 60_000)]);
}, 300_000);

test("ranks die with their agent, those that setsid away too; the node goes DOWN for its silence, never before 3 heartbeats of it, and its job NODE_FAIL after it, every trial", async () => {
  const HEARTBEAT = 0.5;
  c = await startCluster({ agents: 2, heartbeat: HEARTBEAT });
  const figures: string[] = [];
  for (let trial = 1; trial <= 5; trial++) {
    const id = await c.submit({ argv: ["sh", "-c", "setsid sleep 300 & echo pid=$$ esc=$! node=$EBB_NODENAME cgroup=$(sed -n s/^0:://p /proc/self/cgroup); exec sleep 300"], nodes: 2, tasks: 2 });
    const job = await c.waitJob(id, ["RUNNING"]);
    const ranks = await waitFor("both ranks", () => {
      const lines = c!.read(job.output).split("\n").filter((l) => l.startsWith("pid="));
      return lines.length === 2 ? lines.map((l) => ({ pid: Number(/pid=(\d+)/.exec(l)![1]), esc: Number(/esc=(\d+)/.exec(l)![1]), node: /node=(\S+)/.exec(l)![1]!, cgroup: /cgroup=(\S*)/.exec(l)![1]! })) : undefined;
    });
    // Each rank started in its job's cgroup (its agent's, one per job), not where the agent runs.
    for (const r of ranks) expect(r.cgroup).toMatch(new RegExp(`/ebb-agent-${r.node}-\\d+/job-${id}$`));
    // The job's first node: the one whose agent leads its step.
    const victim = job.allocation[0] as string;
    const mine = ranks.find((r) => r.node === victim)!;
    expect(pidAlive(mine.esc)).toBe(true);
    const killedAt = Date.now();
    c.agents.get(victim)!.kill("SIGKILL");
    await waitFor("the dead agent's rank and the process that left its group to die", () => !pidAlive(mine.pid) && !pidAlive(mine.esc));
    const down = await waitFor("the node to go DOWN", async () => {
      const n = (await c!.api("GET", "/v1/nodes")).json.nodes.find((x: any) => x.name === victim);
      return n.state === "DOWN" ? n : undefined;
    });
    // Counted by the controller's own clock, from its last heartbeat from the node. An order, not a
    // bound (load may delay the controller's check, never hasten it): the silence that took the
    // node DOWN is past three heartbeats (never fewer), and the job ended after the kill, NODE_FAIL,
    // naming the node that went DOWN.
    const silent = Number(/no heartbeat for ([\d.]+) s/.exec(down.reason)![1]);
    const failed = await c.waitJob(id, ["NODE_FAIL", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"]);
    const at = Date.parse(failed.events.find((e: any) => e.kind === "ended").time);
    figures.push(`trial ${trial}: DOWN ${(silent / HEARTBEAT).toFixed(2)} heartbeats after its last one, ended ${((at - killedAt) / 1000 / HEARTBEAT).toFixed(2)} heartbeats after the kill`);
    expect(silent).toBeGreaterThanOrEqual(3 * HEARTBEAT);
    expect(at).toBeGreaterThanOrEqual(killedAt);
    expect(failed.reason).toContain(victim);
    expect(failed.state).toBe("NODE_FAIL");
    c.startAgent(victim);
    await c.waitNodes(2, "IDLE");
  }
  console.log(figures.join("\n"));
}, 180_000);
