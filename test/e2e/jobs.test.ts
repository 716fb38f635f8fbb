/** Jobs on a real cluster: a controller and 3 agents, each its own process, on loopback. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pidAlive, startCluster, TestCluster, waitFor } from "../support/cluster.ts";
import { ApiClient } from "../../src/api/client.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 3 });
});
afterAll(async () => {
  await c?.stop();
});

const ENV_PROBE = 'echo "rank=$EBB_PROCID node=$EBB_NODENAME nodeid=$EBB_NODEID local=$EBB_LOCALID ntasks=$EBB_NTASKS nnodes=$EBB_NNODES job=$EBB_JOB_ID step=$EBB_STEP_ID list=$EBB_NODELIST ppid=$PPID out=$(readlink /proc/$$/fd/1)"';

function parseProbe(text: string) {
  return text
    .split("\n")
    .filter((l) => l.startsWith("rank="))
    .map((l) => Object.fromEntries(l.split(" ").map((kv) => kv.split("=") as [string, string])));
}

describe("authentication", () => {
  test("every route but health and the OpenAPI document needs the bearer token", async () => {
    for (const path of ["/v1/health", "/v1/openapi.json"]) expect((await c.api("GET", path, undefined, null)).status).toBe(200);
    for (const [method, path] of [["GET", "/v1/jobs"], ["POST", "/v1/jobs"], ["GET", "/v1/jobs/1"], ["DELETE", "/v1/jobs/1"], ["GET", "/v1/nodes"], ["GET", "/v1/starts"], ["GET", "/v1/usage"]] as const) {
      const r = await c.api(method, path, method === "POST" ? { argv: ["true"] } : undefined, null);
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe("unauthorized");
    }
    expect((await c.api("GET", "/v1/jobs", undefined, "not-the-token")).status).toBe(401);
  });

  test("the token and the cluster key are files only their owner can read", () => {
    for (const f of ["token", "cluster.key"]) expect(statSync(join(c.stateDir, f)).mode & 0o777).toBe(0o600);
  });

  test("clients take the controller from --controller before EBB_CONTROLLER, the token from EBB_TOKEN before the state dir's file", async () => {
    // A state dir with neither token nor controller URL in it, and an EBB_CONTROLLER nothing listens on.
    const empty = join(c.dir, "empty-state");
    mkdirSync(empty, { recursive: true });
    const env = { EBB_STATE_DIR: empty, EBB_CONTROLLER: "http://127.0.0.1:9", EBB_TOKEN: c.token };
    const ok = await c.ebb(["nodes", "--json", "--controller", c.url], { env });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).nodes).toHaveLength(3);
    // Empty variables count as unset: the state dir's files are used.
    const fromFiles = await c.ebb(["nodes", "--json"], { env: { EBB_CONTROLLER: "", EBB_TOKEN: "" } });
    expect(fromFiles.code).toBe(0);
    const wrong = await c.ebb(["nodes", "--controller", c.url], { env: { ...env, EBB_TOKEN: "not-the-token" } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^ebb nodes: .*token/i);
    const none = await c.ebb(["nodes", "--controller", c.url], { env: { ...env, EBB_TOKEN: "" } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`ebb nodes: no API token: set EBB_TOKEN, or run where the controller's state dir (${empty}) is readable (--state-dir)`);
  });
});

describe("a 2-node step started by `ebb run`", () => {
  test("every rank runs once, on the node its rank maps to, started by that node's agent", async () => {
    const r = await c.ebb(["run", "-N", "2", "-n", "4", "sh", "-c", ENV_PROBE]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const ranks = parseProbe(r.stdout).sort((a, b) => Number(a.rank) - Number(b.rank));
    expect(ranks.map((x) => x.rank)).toEqual(["0", "1", "2", "3"]);
    const list = ranks[0]!.list!.split(",");
    expect(list).toHaveLength(2);
    for (const x of ranks) {
      const nodeid = Math.floor(Number(x.rank) / 2); // block layout: 2 ranks per node
      expect(x.nodeid).toBe(String(nodeid));
      expect(x.node).toBe(list[nodeid]);
      expect(x.local).toBe(String(Number(x.rank) % 2));
      expect(x.ntasks).toBe("4");
      expect(x.nnodes).toBe("2");
      expect(x.step).toBe("0");
      // The rank's parent process is the agent of the node it claims to be on.
      expect(Number(x.ppid)).toBe(c.agents.get(x.node!)!.pid);
    }
    const job = await c.job(Number(ranks[0]!.job));
    expect(job.state).toBe("COMPLETED");
    expect(job.kind).toBe("alloc");
    expect(job.allocation).toEqual(list);
  });

  test("-l labels each line with its rank, and the exit status is the failing rank's", async () => {
    // Rank 1 fails only once rank 0 has printed: the first failure kills the other ranks.
    const said = join(c.dir, "rank0-said-hello");
    const script = `echo hello; if [ "$EBB_PROCID" = 1 ]; then while [ ! -e ${said} ]; do sleep 0.05; done; exit 3; fi; touch ${said}`;
    const r = await c.ebb(["run", "-n", "2", "-l", "sh", "-c", script]);
    expect(r.code).toBe(3);
    expect(r.stdout.split("\n").filter(Boolean).sort()).toEqual(["0: hello", "1: hello"]);
    expect(r.stderr).toContain("rank 1");
    expect(r.stderr).toContain("exited with code 3");
  });

  test("--tasks-per-node, -t and -J shape the job it asks for", async () => {
    const r = await c.ebb(["run", "-N", "2", "--tasks-per-node", "2", "-t", "1:30", "-J", "four-ranks", "-l", "sh", "-c", "echo $EBB_NODENAME $EBB_JOB_ID"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").sort();
    expect(lines.map((l) => l.split(":")[0])).toEqual(["0", "1", "2", "3"]);
    const nodeOf = lines.map((l) => l.split(" ")[1]);
    expect(nodeOf[0]).toBe(nodeOf[1]);
    expect(nodeOf[2]).toBe(nodeOf[3]);
    expect(nodeOf[0]).not.toBe(nodeOf[2]);
    const job = await c.job(Number(lines[0]!.split(" ")[2]));
    expect({ name: job.name, timeLimit: job.timeLimit, allocation: job.allocation }).toEqual({ name: "four-ranks", timeLimit: 90, allocation: [nodeOf[0], nodeOf[2]] });
  });

  test("--mpi=none gives the ranks no PMI; by default each has its own PMI socket", async () => {
    const probe = 'echo "$EBB_PROCID ${PMI_FD:-no-fd} ${PMI_RANK:-no-rank} ${PMI_SIZE:-no-size}"';
    const none = await c.ebb(["run", "-n", "2", "--mpi=none", "sh", "-c", probe]);
    expect(none.code).toBe(0);
    expect(none.stdout.trim().split("\n").sort()).toEqual(["0 no-fd no-rank no-size", "1 no-fd no-rank no-size"]);
    const both = await c.ebb(["run", "-n", "2", "sh", "-c", probe]);
    expect(both.stdout.trim().split("\n").sort()).toEqual(["0 3 0 2", "1 3 1 2"]);
    const bad = await c.ebb(["run", "--mpi=pmix", "true"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--mpi pmix: expected both, pmi1, pmi2 or none");
  });

  test("flags after the program name belong to the program", async () => {
    const r = await c.ebb(["run", "sh", "-c", "echo $0 $1", "-l", "-N"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("-l -N");
  });

  test("a program that does not exist fails with a clear message", async () => {
    const r = await c.ebb(["run", "/no/such/program"]);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain("No such file or directory");
  });
});

describe("jobs submitted through the HTTP API", () => {
  test("a command job runs its ranks over its nodes and writes their output to its file", async () => {
    const id = await c.submit({ argv: ["sh", "-c", ENV_PROBE], nodes: 3, tasks: 3, output: "cmd-%j.out" });
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    expect(job.exitCode).toBe(0);
    expect(job.output).toBe(join(c.dir, `cmd-${id}.out`));
    const ranks = parseProbe(c.read(job.output));
    expect(ranks.map((r) => r.rank).sort()).toEqual(["0", "1", "2"]);
    expect(new Set(ranks.map((r) => r.node)).size).toBe(3);
    // The first node's rank writes to the file itself; the others' output comes up the tree.
    for (const r of ranks) expect(r.out).toEqual(r.rank === "0" ? job.output : expect.stringMatching(/^(pipe|socket):/));
    expect(job.steps).toHaveLength(1);
    expect(job.steps[0].state).toBe("COMPLETED");
    expect(job.events.map((e: any) => e.kind)).toEqual(["submitted", "started", "ended"]);
    // Its ranks wrote no CFG table (sh is neither MPI nor ebb/comm): nothing was reported, so the
    // step root in the first node's agent never connected to the controller for it.
    expect(job.cfg).toBeNull();
  });

  test("name, env, cwd and tasksPerNode of a submission reach the ranks", async () => {
    const cwd = join(c.dir, "api-cwd");
    mkdirSync(cwd, { recursive: true });
    const id = await c.submit({ argv: ["sh", "-c", 'echo "$EBB_PROCID $EBB_NODEID $GREETING $(pwd) $EBB_JOB_NAME"'], nodes: 2, tasksPerNode: 2, name: "api-env", env: { GREETING: "hello there" }, cwd });
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect({ state: job.state, name: job.name }).toEqual({ state: "COMPLETED", name: "api-env" });
    // The output file is relative to the job's cwd.
    expect(c.read(join(cwd, `ebb-${id}.out`)).trim().split("\n").sort()).toEqual([0, 1, 2, 3].map((r) => `${r} ${Math.floor(r / 2)} hello there ${cwd} api-env`));
  });

  test("a failing command job is FAILED with its exit code", async () => {
    const id = await c.submit({ argv: ["sh", "-c", "exit 7"] });
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("FAILED");
    expect(job.exitCode).toBe(7);
    expect(job.steps.map((s: any) => [s.stepId, s.state, s.exitCode])).toEqual([[0, "FAILED", 7]]);
  });

  test("GET /v1/jobs filters by state and the OpenAPI document describes the routes", async () => {
    const done = (await c.api("GET", "/v1/jobs?state=COMPLETED")).json.jobs;
    expect(done.length).toBeGreaterThan(0);
    expect(done.every((j: any) => j.state === "COMPLETED")).toBe(true);
    const doc = (await c.api("GET", "/v1/openapi.json")).json;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/jobs", "/v1/jobs/{id}", "/v1/nodes", "/v1/health"]));
    expect(doc.paths["/v1/jobs"].post.requestBody.content["application/json"].schema.properties.nodes).toBeDefined();
  });
});

describe("batch scripts submitted with `ebb submit`", () => {
  test("#EBB directives apply, the script runs on the first node, and `ebb run` inside it uses the allocation", async () => {
    writeFileSync(
      join(c.dir, "batch.sh"),
      [
        "#!/bin/sh",
        "#EBB -N 2",
        "#EBB -t 2:00",
        "#EBB --job-name directive-name",
        `echo "script on $EBB_NODENAME of $EBB_NODELIST"`,
        // A .env where `ebb run` starts is not the step's environment.
        "mkdir -p with-dotenv && cd with-dotenv && echo EBB_SURPRISE=from-dotenv > .env",
        "ebb run -l sh -c 'echo step rank $EBB_PROCID on $EBB_NODENAME$EBB_SURPRISE'",
        "echo done",
      ].join("\n"),
    );
    const r = await c.ebb(["submit", "--parsable", "batch.sh"]);
    expect(r.code).toBe(0);
    const id = Number(r.stdout.trim());
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    expect(job.name).toBe("directive-name");
    expect(job.timeLimit).toBe(120);
    expect(job.allocation).toHaveLength(2);
    const out = c.read(`ebb-${id}.out`);
    expect(out).toContain(`script on ${job.allocation[0]} of ${job.allocation.join(",")}`);
    expect(out.split("\n")).toContain(`0: step rank 0 on ${job.allocation[0]}`);
    expect(out.split("\n")).toContain(`1: step rank 1 on ${job.allocation[1]}`);
    expect(out.trim().endsWith("done")).toBe(true);
    expect(job.steps.map((s: any) => s.state)).toEqual(["COMPLETED"]);
  });

  test("a step on chosen nodes of its job (srun -w, ebb run -w): ray's loop of one step per node, started in the background; sacct reports the job", async () => {
    writeFileSync(
      join(c.dir, "per-node.sh"),
      [
        "#!/bin/sh",
        "#SBATCH -N 3",
        "#SBATCH -o per-node.out",
        'nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")',
        'for n in $nodes; do srun --nodes=1 --ntasks=1 -w "$n" sh -c \'echo "on $SLURMD_NODENAME for $0"\' "$n" & done',
        "wait",
        'last=$(echo $nodes | cut -d" " -f3)',
        "ebb run -w \"$last\" sh -c 'echo \"ebb run on $EBB_NODENAME\"'",
        "srun -w nowhere true || echo refused",
        "ebb run -w nowhere true || echo refused by the controller",
        // A script's closing report: sacct answers for this cluster's job.
        'sacct -j "$SLURM_JOB_ID.batch" -X -n -P --format=JobID,JobName,State,NNodes',
        // And the other common closing line: seff, whose failure would have failed the job.
        'seff "$SLURM_JOB_ID"',
      ].join("\n"),
    );
    const r = await c.ebb(["submit", "--parsable", "per-node.sh"]);
    expect(r.code).toBe(0);
    const job = await c.waitJob(Number(r.stdout.trim()), ["COMPLETED", "FAILED"]);
    const out = c.read("per-node.out");
    expect(job.state, out).toBe("COMPLETED");
    const lines = out.split("\n");
    for (const n of job.allocation) expect(lines).toContain(`on ${n} for ${n}`);
    expect(lines).toContain(`ebb run on ${job.allocation[2]}`);
    expect(out).toContain(`srun: error: --nodelist=nowhere: nowhere is not among the job's nodes (${job.allocation.join(",")})`);
    expect(lines).toContain("refused");
    expect(out).toContain(`nowhere is not among job ${job.id}'s nodes (`);
    expect(lines).toContain("refused by the controller");
    expect(lines).toContain(`${job.id}|per-node.sh|RUNNING|3`);
    for (const line of [`Job ID: ${job.id}`, "State: RUNNING", "Nodes: 3", "Cores per node: 1", "WARNING: Efficiency statistics may be misleading for RUNNING jobs."]) expect(lines).toContain(line);
  });

  test("command-line flags override directives; -o names the output file", async () => {
    writeFileSync(join(c.dir, "small.sh"), "#!/bin/sh\n#EBB -N 3\necho $EBB_NNODES\n");
    const r = await c.ebb(["submit", "-N", "1", "-o", "small-%j.txt", "small.sh"]);
    const id = Number(/Submitted batch job (\d+)/.exec(r.stdout)![1]);
    await c.waitJob(id, ["COMPLETED"]);
    expect(c.read(`small-${id}.txt`).trim()).toBe("1");
  });

  test("bad flags are refused with a message naming them", async () => {
    const r = await c.ebb(["submit", "-N", "zero", "small.sh"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--nodes zero");
    const r2 = await c.ebb(["submit", "-N", "9", "small.sh"]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("cluster has 3");
  });
});

describe("ending jobs early", () => {
  async function ranksOf(id: number, count: number): Promise<number[]> {
    const job = await c.waitJob(id, ["RUNNING"]);
    const text = await waitFor("the ranks to print their pids", () => {
      const t = c.read(job.output);
      return t.split("\n").filter((l) => l.startsWith("pid=")).length >= count ? t : undefined;
    });
    return text.split("\n").filter((l) => l.startsWith("pid=")).map((l) => Number(l.slice(4)));
  }

  test("cancel kills every rank on every node", async () => {
    const id = await c.submit({ argv: ["sh", "-c", "echo pid=$$; exec sleep 300"], nodes: 2, tasks: 4 });
    const pids = await ranksOf(id, 4);
    expect(pids.every(pidAlive)).toBe(true);
    expect((await c.api("DELETE", `/v1/jobs/${id}`)).status).toBe(200);
    const job = await c.waitJob(id, ["CANCELLED"]);
    expect(job.reason).toContain("cancelled");
    await waitFor("the ranks to die", () => pids.every((p) => !pidAlive(p)));
    const again = await c.api("DELETE", `/v1/jobs/${id}`);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe("job_finished");
  });

  test("a cancelled batch job's node is COMPLETING until its last process is gone, then IDLE", async () => {
    // The script outlives SIGTERM by a second. The agent reports the job clean once it has no
    // process left, and the node is free then, well before the controller's fallback (kill wait +
    // 5 s = 7 s).
    const id = await c.submit({ script: '#!/bin/sh\ntrap "sleep 1; exit 0" TERM\necho pid=$$\nwhile :; do sleep 0.1; done\n', nodes: 1 });
    const [pid] = await ranksOf(id, 1);
    const nodeOf = async () => ((await c.api("GET", "/v1/nodes")).json.nodes as { name: string; state: string; jobId: number | null }[]).find((n) => n.jobId === id);
    const node = (await nodeOf())!.name;
    expect((await c.api("DELETE", `/v1/jobs/${id}`)).status).toBe(200);
    expect(await nodeOf()).toMatchObject({ name: node, state: "COMPLETING" });
    await waitFor("the node to be IDLE", async () => ((await c.api("GET", "/v1/nodes")).json.nodes as { name: string; state: string }[]).find((n) => n.name === node)?.state === "IDLE", 5000);
    expect(pidAlive(pid!)).toBe(false);
  });

  test("`ebb cancel` of a batch job kills the script and what it started", async () => {
    writeFileSync(join(c.dir, "long.sh"), "#!/bin/sh\nsleep 300 &\necho pid=$!\necho pid=$$\nwait\n");
    const r = await c.ebb(["submit", "--parsable", "long.sh"]);
    const id = Number(r.stdout.trim());
    const pids = await ranksOf(id, 2);
    const cancel = await c.ebb(["cancel", String(id)]);
    expect(cancel.code).toBe(0);
    await c.waitJob(id, ["CANCELLED"]);
    await waitFor("the script's processes to die", () => pids.every((p) => !pidAlive(p)));
  });

  test("a job that outlives its time limit ends TIMEOUT and its ranks die", async () => {
    const id = await c.submit({ argv: ["sh", "-c", "echo pid=$$; exec sleep 300"], timeLimit: 2 });
    const pids = await ranksOf(id, 1);
    const job = await c.waitJob(id, ["TIMEOUT"], 15_000);
    expect(job.reason).toContain("time limit");
    await waitFor("the rank to die", () => pids.every((p) => !pidAlive(p)));
  });

  test("`ebb run -t` past its limit: the job is TIMEOUT, its ranks die, ebb run says so and exits 143", async () => {
    const r = await c.ebb(["run", "-N", "2", "-t", "0:02", "-J", "overtime", "sh", "-c", "echo pid=$$; exec sleep 300"]);
    expect(r.code).toBe(143);
    expect(r.stderr).toMatch(/ebb: error: job (\d+) timeout: time limit of 2 s reached/);
    const id = Number(/job (\d+) timeout/.exec(r.stderr)![1]);
    expect((await c.job(id)).state).toBe("TIMEOUT");
    const pids = [...r.stdout.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    await waitFor("the ranks to die", () => pids.every((p) => !pidAlive(p)));
  });

  test("Ctrl-C on `ebb run` kills every rank, gives the allocation back, and the job is CANCELLED", async () => {
    const run = c.ebbSpawn(["run", "-N", "2", "-n", "2", "sh", "-c", "echo pid=$$; exec sleep 300"]);
    const reader = run.stdout.getReader();
    let text = "";
    await waitFor("both ranks to start", async () => {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      return text.split("\n").filter((l) => l.startsWith("pid=")).length >= 2;
    });
    const pids = text.split("\n").filter((l) => l.startsWith("pid=")).map((l) => Number(l.slice(4)));
    run.kill("SIGINT");
    const code = await run.exited;
    expect(code).toBe(130);
    await waitFor("the ranks to die", () => pids.every((p) => !pidAlive(p)));
    const jobs = (await c.api("GET", "/v1/jobs?state=RUNNING,PENDING")).json.jobs;
    expect(jobs).toEqual([]);
    const job = (await c.api("GET", "/v1/jobs?limit=1")).json.jobs[0];
    expect({ state: job.state, reason: job.reason }).toEqual({ state: "CANCELLED", reason: "ebb run was interrupted (SIGINT)" });
    expect((await c.job(job.id)).steps.map((s: any) => s.state)).toEqual(["CANCELLED"]);
  });
});

describe("listing commands", () => {
  test("queue, show and nodes print tables and --json", async () => {
    const id = await c.submit({ argv: ["sleep", "30"], nodes: 1, name: "sleeper" });
    await c.waitJob(id, ["RUNNING"]);
    const q = await c.ebb(["queue"]);
    expect(q.stdout).toMatch(new RegExp(`^${id}\\s+sleeper\\s+\\S+\\s+RUNNING`, "m"));
    const qj = JSON.parse((await c.ebb(["queue", "--json"])).stdout);
    expect(qj.jobs.map((j: any) => j.id)).toContain(id);
    const all = JSON.parse((await c.ebb(["queue", "--all", "--json"])).stdout);
    const done = all.jobs.find((j: any) => j.state === "COMPLETED" && j.arrayJobId === null);
    expect(done).toBeDefined();
    // squeue -j's view: an ended job only within --ended-within (Slurm's MinJobAge); the running one always.
    const within = async (s: number) => JSON.parse((await c.ebb(["queue", "-j", `${done.id},${id}`, "--ended-within", String(s), "--json"])).stdout).jobs.map((j: any) => j.id).sort();
    expect(await within(3600)).toEqual([done.id, id].sort());
    expect(await within(0)).toEqual([id]);
    const show = await c.ebb(["show", String(id)]);
    expect(show.stdout).toContain("State        RUNNING");
    // What it holds on its node: which cores, how much memory.
    expect(show.stdout).toMatch(/^Resources    \S/m);
    expect(show.stdout).toMatch(/^Allocation:\n  node0\d\s+cores [\d,-]+ \(\d+\)  mem \d/m);
    const shown = JSON.parse((await c.ebb(["show", String(id), "--json"])).stdout);
    expect(shown.events[1].kind).toBe("started");
    expect(shown.shares.map((s: any) => s.node)).toEqual(shown.allocation);
    const nodes = JSON.parse((await c.ebb(["nodes", "--json"])).stdout).nodes;
    expect(nodes.map((n: any) => n.name)).toEqual(["node01", "node02", "node03"]);
    expect(nodes.filter((n: any) => n.state === "ALLOCATED").map((n: any) => n.jobId)).toEqual([id]);
    const held = nodes.find((n: any) => n.jobId === id);
    expect({ jobs: held.jobs, cpus: held.allocated.cpus + held.free.cpus }).toEqual({ jobs: [id], cpus: held.cpus });
    expect(held.allocated.cpus).toBeGreaterThan(0);
    // Cores allocated/free/total: node01's 2 cores.
    expect((await c.ebb(["nodes"])).stdout).toMatch(/^node01\s+(IDLE|ALLOCATED)\s+free\s+\d+\/\d+\/2\s/m);
    await c.ebb(["cancel", String(id)]);
    const missing = await c.ebb(["show", "99999"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("job 99999 does not exist");
  });

  test("more than 1,000 jobs: the API pages them (next/before), and queue and history list every one", async () => {
    // Two arrays of 750 (one array may have at most 1,001 tasks).
    const arrays: number[] = [];
    for (let k = 0; k < 2; k++) {
      const submitted = await c.api("POST", "/v1/jobs", { argv: ["true"], array: "1-750", hold: true, name: "many", cwd: c.dir });
      expect(submitted.status).toBe(201);
      arrays.push(submitted.json.id as number);
    }
    try {
      const ids = JSON.parse((await c.ebb(["queue", "--json"])).stdout).jobs.filter((j: any) => arrays.includes(j.arrayJobId)).map((j: any) => j.id);
      expect(ids).toHaveLength(1500);
      // Pages of 600, newest first, each in id order, until there is no `next`.
      const seen: number[][] = [];
      let before: number | undefined;
      do {
        const page = await c.api("GET", `/v1/jobs?name=many&limit=600${before ? `&before=${before}` : ""}`);
        expect(page.status).toBe(200);
        expect(page.json.jobs.length).toBeLessThanOrEqual(600);
        seen.push(page.json.jobs.map((j: any) => j.id));
        before = page.json.next;
      } while (before !== undefined);
      expect(seen.map((p) => p.length)).toEqual([600, 600, 300]);
      expect(seen.reverse().flat()).toEqual(ids);
      expect((await c.ebb(["queue"])).stdout).toMatch(new RegExp(`^${arrays[1]}_\\[1-750\\]\\s+many\\s+\\S+\\s+PENDING`, "m"));
      expect(JSON.parse((await c.ebb(["queue", "--json", "--limit", "1200"])).stdout).jobs).toHaveLength(1200);
      const history = JSON.parse((await c.ebb(["history", "--json", "--name", "many"])).stdout).jobs;
      expect(history).toHaveLength(1500);
    } finally {
      for (const id of arrays) await c.api("DELETE", `/v1/jobs/${id}`);
    }
  }, 120_000);

  test("an oversized listing query: the CLI never sends one, and the client says what was too large and what to do", async () => {
    // Filters longer than the API takes are refused before any request; repeated states are sent once.
    const name = await c.ebb(["history", "--name", "n".repeat(20_000)]);
    expect({ code: name.code, stderr: name.stderr }).toEqual({ code: 2, stderr: "ebb history: --name: 20000 characters; job names have at most 200\n" });
    const user = await c.ebb(["history", "--user", "u".repeat(20_000)]);
    expect(user.stderr).toBe("ebb history: --user: 20000 characters; user names have at most 200\n");
    for (const cmd of ["history", "queue"]) {
      const states = await c.ebb([cmd, "--json", "--state", Array(3000).fill("FAILED,COMPLETED").join(",")]);
      expect({ code: states.code, stderr: states.stderr }).toEqual({ code: 0, stderr: "" });
    }
    // A request line over the controller's limit (a client of the API that does not bound its filters): not a bare "HTTP 431".
    const refused = await new ApiClient(c.url, c.token).jobs({ user: "u".repeat(20_000) }).then(() => undefined, (e: Error & { status: number; field?: string }) => e);
    expect(refused?.status).toBe(431);
    expect(refused?.field).toBe("user");
    expect(refused?.message).toBe("the controller refused GET /v1/jobs as too large (HTTP 431: the request line and headers may take 16 KiB; its query parameter user is 20000 characters long); narrow the filter, or give fewer or shorter values");
  });
});
