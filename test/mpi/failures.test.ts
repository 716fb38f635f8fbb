/** MPI ranks that abort, die, or talk nonsense: the step dies everywhere, cleanly, and nothing else does. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pidAlive, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { mpi, program } from "./programs.ts";

const abort = await mpi("abort");
const sleeper = await mpi("sleeper");
const hello = await mpi("hello");

let c: TestCluster;
beforeAll(async () => {
  if (hello) c = await startCluster({ agents: 4 });
});
afterAll(async () => {
  await c?.stop();
});

const pids = (stdout: string) => [...stdout.matchAll(/pid=(\d+) rank=(\d+)/g)].map((m) => ({ pid: Number(m[1]), rank: Number(m[2]) }));

/** `ebb run args` of 4 ranks ends with `code` and every one of `messages`, and every rank it started is gone. */
async function stepDown(args: string[], code: number, messages: string[], env?: Record<string, string>): Promise<void> {
  const r = await c.ebb(["run", ...args], env ? { env } : undefined);
  expect(r.code).toBe(code);
  for (const m of messages) expect(r.stderr).toContain(m);
  const ranks = pids(r.stdout);
  expect(ranks).toHaveLength(4);
  await waitFor("every rank to be gone", () => ranks.every((x) => !pidAlive(x.pid)));
}

describe.skipIf(!hello)("a failing rank takes its step down on every node", () => {
  test("MPI_Abort from rank 1 of 4: every rank gone, its exit code and a message naming it", async () => {
    await stepDown(["-N", "2", "-n", "4", abort!], 7, ["ebb: error: rank 1 on", "called abort with code 7"]);
  });

  test("MPI_Abort down a chain of agents (--fanout 1 over 4 nodes): the kill is relayed to every node", async () => {
    await stepDown(["-N", "4", "-n", "4", "--fanout", "1", abort!], 7, ["called abort with code 7"]);
  });

  test("a rank killed by a signal: the others are killed and ebb run names it", async () => {
    const run = c.ebbSpawn(["run", "-N", "2", "-n", "4", sleeper!]);
    const reader = run.stdout.getReader();
    let text = "";
    await waitFor("all ranks to report", async () => {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      return pids(text).length === 4;
    });
    reader.releaseLock();
    const victim = pids(text).find((x) => x.rank === 2)!;
    process.kill(victim.pid, "SIGKILL");
    const [code, err] = await Promise.all([run.exited, new Response(run.stderr).text()]);
    expect(code).toBe(137);
    expect(err).toContain("rank 2 on");
    expect(err).toContain("killed by SIGKILL");
    await waitFor("the other ranks to be gone", () => pids(text).every((x) => !pidAlive(x.pid)));
  });
});

describe.skipIf(!hello)("MPIEXEC_TIMEOUT (Hydra's; MPICH's runtests sets it for every test)", () => {
  test("the step is killed on every node once it has run that long, and ebb run exits 255 as mpiexec does", async () => {
    await stepDown(["-N", "2", "-n", "4", sleeper!], 255, ["MPIEXEC_TIMEOUT: the step ran out of its 10 s"], { MPIEXEC_TIMEOUT: "10" });
  });

  test("0 is no limit; a value that is not a number, or longer than a timer holds, is refused naming it", async () => {
    const none = await c.ebb(["run", "-n", "2", hello!], { env: { MPIEXEC_TIMEOUT: "0" } });
    expect(none.code).toBe(0);
    const bad = await c.ebb(["run", "-n", "1", hello!], { env: { MPIEXEC_TIMEOUT: "soon" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("MPIEXEC_TIMEOUT soon: expected a whole number");
    // Past what a timer holds it would fire at once: refused, not a step killed on its start.
    const long = await c.ebb(["run", "-n", "1", hello!], { env: { MPIEXEC_TIMEOUT: "3000000" } });
    expect(long.code).toBe(2);
    expect(long.stderr).toContain("MPIEXEC_TIMEOUT 3000000: must be at most 2147483");
  });
});

describe.skipIf(!hello)("malformed PMI input", () => {
  test("a rank that writes garbage fails its own step naming the rank; a step beside it is unaffected", async () => {
    const bad = c.ebb(["run", "-N", "2", "-n", "2", "--", process.execPath, program("garbage.ts")]);
    const good = c.ebb(["run", "-N", "2", "-n", "4", hello!]);
    const [b, g] = await Promise.all([bad, good]);
    expect(b.code).not.toBe(0);
    expect(b.stderr).toMatch(/error: PMI protocol error from rank 1\b/);
    expect(g.code).toBe(0);
    expect(g.stdout.match(/sum=6/g)).toHaveLength(4);
  });

  test("fuzz: random text on PMI fds never hangs a step or takes an agent down", async () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= 12; seed++) {
      const r = await c.ebb(["run", "-N", "2", "-n", "4", "--", process.execPath, program("noise.ts"), String(seed)]);
      // Every step ends (a hang would time the test out). One that fails says which rank and why.
      if (r.code !== 0) {
        expect(r.stderr).toMatch(/^ebb: error: .*rank \d/m);
        failures.push(r.stderr.split("\n")[0]!);
      }
    }
    // The noise is fatal more often than not; a fuzz that never broke anything tested nothing.
    expect(failures.length).toBeGreaterThan(6);
    expect(failures.some((f) => f.includes("PMI protocol error"))).toBe(true);
    await c.waitNodes(4, "IDLE");
    const after = await c.ebb(["run", "-N", "4", "-n", "4", hello!]);
    expect(after.code).toBe(0);
  });
});
