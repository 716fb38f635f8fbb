/**
 * What a Slurm user reaches for first, end to end on a local cluster of 3 agents: arrays,
 * dependencies, holds, waits, separate error files, #SBATCH scripts, node lists, --test-only,
 * history, jobs that submit jobs, and shell completion.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { outputOf, ROOT, runProcess, startCluster, TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 3 });
});
afterAll(async () => {
  await c?.stop();
});

const idOf = (stdout: string) => Number(/Submitted batch job (\d+)/.exec(stdout)?.[1] ?? Number.NaN);

async function submit(args: string[], env?: Record<string, string>): Promise<number> {
  const r = await c.ebb(["submit", ...args], { env });
  if (r.code !== 0) throw new Error(`ebb submit ${args.join(" ")}: ${r.code} ${r.stderr}`);
  return idOf(r.stdout);
}

/** The most jobs of `jobs` that ran at the same moment, from their start and end times. */
function peakOverlap(jobs: { startTime: string; endTime: string }[]): number {
  const events = jobs.flatMap((j) => [[Date.parse(j.startTime), 1] as const, [Date.parse(j.endTime), -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of events) peak = Math.max(peak, (now += d));
  return peak;
}

describe("strict command lines on a cluster", () => {
  test("`ebb run --account lab hostname` runs nothing: exit 2 naming the flag", async () => {
    const before = (await c.api("GET", "/v1/jobs")).json.jobs.length;
    const r = await c.ebb(["run", "--account", "lab", "hostname"]);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: "ebb run: unknown flag --account (ebb keeps no accounts)\n", stdout: "" });
    expect((await c.api("GET", "/v1/jobs")).json.jobs.length).toBe(before);
  });

  test("a partition on a controller without partitions (a script from another cluster) is left out with a warning, from the command line and from #SBATCH, and the job runs; the API still refuses it", async () => {
    const r = await c.ebb(["run", "--partition", "debug", "echo", "ran"]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: "ran\n" });
    expect(r.stderr).toContain("ebb run: warning: this cluster has no partitions: --partition=debug left out, the job may run on any node");
    writeFileSync(join(c.dir, "part.sh"), "#!/bin/sh\n#SBATCH --partition=gpu,debug\n#SBATCH -o part.out\necho ran\n");
    const s = await c.ebb(["submit", "--parsable", "part.sh"]);
    expect(s.stderr).toBe("ebb submit: warning: this cluster has no partitions: --partition=gpu,debug left out, the job may run on any node\n");
    expect((await c.waitJob(Number(s.stdout.trim()), ["COMPLETED", "FAILED"], 60_000)).state).toBe("COMPLETED");
    const api = await c.api("POST", "/v1/jobs", { argv: ["true"], partition: "debug" });
    expect(api.status).toBe(400);
    expect(api.json.error.message).toContain("partition debug does not exist: this controller has no partitions");
  });

  test("#EBB lines are as strict as the command line and name the line", async () => {
    writeFileSync(join(c.dir, "strict.sh"), "#!/bin/sh\n#EBB -N 1\n#EBB --hodl\necho never\n");
    const r = await c.ebb(["submit", "strict.sh"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: "ebb submit: strict.sh line 3: #EBB --hodl: unknown flag --hodl; did you mean --hold?\n" });
  });

  test("a Slurm script's #SBATCH lines are read, and the flags ebb does not have are listed once", async () => {
    writeFileSync(
      join(c.dir, "slurm.sh"),
      ["#!/bin/bash", "#SBATCH --job-name=from-sbatch", "#SBATCH -N 2", "#SBATCH --account=lab", "#SBATCH --mail-user me@example.org", "#SBATCH --output=sbatch-%j.out", 'echo "nodes=$EBB_JOB_NUM_NODES"'].join("\n"),
    );
    const r = await c.ebb(["submit", "slurm.sh"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      "ebb submit: warning: ignoring #SBATCH flags ebb does not have: --account=lab (line 4: ebb keeps no accounts)\n" +
        "ebb submit: warning: ebb sends no mail; --mail-user=me@example.org ignored (ebb wait ID, or ebb submit --wait, tells when a job ends)\n",
    );
    const job = await c.waitJob(idOf(r.stdout), ["COMPLETED", "FAILED"]);
    expect({ state: job.state, name: job.name, nodes: job.allocation.length }).toEqual({ state: "COMPLETED", name: "from-sbatch", nodes: 2 });
    expect(c.read(`sbatch-${job.id}.out`)).toBe("nodes=2\n");
  });
});

describe("job arrays", () => {
  test("an array of 6 with %2 never runs more than 2 tasks at once, and each task sees its variables", async () => {
    writeFileSync(join(c.dir, "array.sh"), '#!/bin/sh\necho "array=$EBB_ARRAY_JOB_ID task=$EBB_ARRAY_TASK_ID count=$EBB_ARRAY_TASK_COUNT min=$EBB_ARRAY_TASK_MIN max=$EBB_ARRAY_TASK_MAX job=$EBB_JOB_ID"\nsleep 1\n');
    const id = await submit(["--array=1-6%2", "array.sh"]);
    const q = await c.ebb(["queue"]);
    expect(q.stdout).toMatch(new RegExp(`^${id}_\\[\\d-6%2\\]\\s+array\\.sh\\s+\\S+\\s+PENDING.*\\(JobArrayTaskLimit\\)$`, "m"));
    expect((await c.ebb(["wait", String(id)])).code).toBe(0);
    const tasks = (await c.api("GET", `/v1/jobs?array=${id}`)).json.jobs;
    expect(tasks.map((t: any) => [t.arrayJobId, t.arrayTaskId, t.state])).toEqual([1, 2, 3, 4, 5, 6].map((t) => [id, t, "COMPLETED"]));
    expect(peakOverlap(tasks)).toBe(2);
    for (const t of tasks) expect(c.read(`ebb-${id}_${t.arrayTaskId}.out`)).toBe(`array=${id} task=${t.arrayTaskId} count=6 min=1 max=6 job=${t.id}\n`);
    const all = await c.ebb(["queue", "--all"]);
    expect(all.stdout).toMatch(new RegExp(`^${id}_3\\s+array\\.sh\\s+\\S+\\s+COMPLETED.*\\s0\\s+node0\\d$`, "m"));
  }, 60_000);

  test("`ebb cancel ID_N` cancels one task, `ebb cancel ID` the rest of the array", async () => {
    const id = await submit(["-H", "-a", "0-4:2", "-o", "arr-%A-%a.out", "--wrap", "true"]);
    const tasks = () => c.api("GET", `/v1/jobs?array=${id}`).then((r) => r.json.jobs.map((t: any) => [t.arrayTaskId, t.state]));
    expect(await tasks()).toEqual([[0, "PENDING"], [2, "PENDING"], [4, "PENDING"]]);
    expect((await c.ebb(["show", `${id}_2`])).stdout).toMatch(new RegExp(`^ArrayTask\\s+${id}_2$`, "m"));
    // The first task's job id is the array's: named as a task, it is that task alone.
    expect((await c.ebb(["cancel", `${id}_0`])).code).toBe(0);
    expect(await tasks()).toEqual([[0, "CANCELLED"], [2, "PENDING"], [4, "PENDING"]]);
    expect((await c.ebb(["cancel", `${id}_4`])).code).toBe(0);
    expect(await tasks()).toEqual([[0, "CANCELLED"], [2, "PENDING"], [4, "CANCELLED"]]);
    expect((await c.ebb(["cancel", String(id)])).code).toBe(0);
    expect(await tasks()).toEqual([[0, "CANCELLED"], [2, "CANCELLED"], [4, "CANCELLED"]]);
    const again = await c.ebb(["cancel", `${id}_9`]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: `ebb cancel: job ${id}_9: job ${id}_9 does not exist\n` });
  });
});

describe("dependencies", () => {
  test("afterok and afternotok chains, in both outcomes; a broken one stays PENDING saying which job broke it", async () => {
    const good = await submit(["--wrap", "sleep 3; exit 0"]);
    const okOfGood = await submit(["-d", `afterok:${good}`, "--wrap", "echo ran"]);
    const waiting = await c.job(okOfGood);
    expect({ state: waiting.state, reason: waiting.reason, detail: waiting.reasonDetail }).toEqual({ state: "PENDING", reason: "Dependency", detail: `waits for job ${good} to complete (afterok)` });
    const bad = await submit(["--wrap", "sleep 1; exit 4"]);
    const notokOfGood = await submit(["-d", `afternotok:${good}`, "--wrap", "echo ran"]);
    const okOfBad = await submit(["--dependency", `afterok:${bad}`, "--wrap", "echo ran"]);
    const notokOfBad = await submit(["--dependency=afternotok:" + bad, "--wrap", "echo ran"]);
    expect((await c.waitJob(okOfGood, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    expect((await c.waitJob(notokOfBad, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    const never = await waitFor("the broken dependencies", async () => {
      const [a, b] = await Promise.all([c.job(notokOfGood), c.job(okOfBad)]);
      return a.reason === "DependencyNeverSatisfied" && b.reason === "DependencyNeverSatisfied" ? [a, b] : undefined;
    });
    expect(never.map((j) => j.state)).toEqual(["PENDING", "PENDING"]);
    const show = await c.ebb(["show", String(okOfBad)]);
    expect(show.stdout).toContain(`State        PENDING (DependencyNeverSatisfied: job ${bad} ended FAILED (exit code 4), so afterok:${bad} can never be met)`);
    expect((await c.ebb(["queue"])).stdout).toMatch(new RegExp(`^${notokOfGood}\\s.*\\(DependencyNeverSatisfied\\)$`, "m"));
    expect((await c.ebb(["cancel", String(notokOfGood), String(okOfBad)])).code).toBe(0);
  }, 60_000);

  test("--kill-on-invalid-dep=yes (an #SBATCH line): the job is cancelled once its dependency can never be met, saying why; one already broken at submit too", async () => {
    const bad = await submit(["--wrap", "sleep 1; exit 3"]);
    writeFileSync(join(c.dir, "kill-dep.sh"), `#!/bin/sh\n#SBATCH --dependency=afterok:${bad}\n#SBATCH --kill-on-invalid-dep=yes\necho never\n`);
    const killed = await submit(["kill-dep.sh"]);
    const kept = await submit(["-d", `afterok:${bad}`, "--kill-on-invalid-dep=no", "--wrap", "echo never"]);
    const ended = await c.waitJob(killed, ["CANCELLED", "COMPLETED", "FAILED"]);
    expect(ended.state).toBe("CANCELLED");
    expect((await c.ebb(["show", String(killed)])).stdout).toContain(`DependencyNeverSatisfied: job ${bad} ended FAILED (exit code 3), so afterok:${bad} can never be met (--kill-on-invalid-dep)`);
    expect((await waitFor("the kept job to say why it waits", async () => ((await c.job(kept)).reason === "DependencyNeverSatisfied" ? c.job(kept) : undefined))).state).toBe("PENDING");
    const late = await submit(["-d", `afterok:${bad}`, "--kill-on-invalid-dep", "yes", "--wrap", "echo never"]);
    expect((await c.waitJob(late, ["CANCELLED", "COMPLETED", "FAILED"])).state).toBe("CANCELLED");
    const wrong = await c.ebb(["submit", "--kill-on-invalid-dep=maybe", "--wrap", "true"]);
    expect({ code: wrong.code, stderr: wrong.stderr }).toEqual({ code: 2, stderr: "ebb submit: --kill-on-invalid-dep=maybe: expected yes or no\n" });
    expect((await c.ebb(["cancel", String(kept)])).code).toBe(0);
  }, 60_000);

  test("singleton: jobs of the same name run one after the other", async () => {
    const first = await submit(["-J", "solo", "-d", "singleton", "--wrap", "sleep 3"]);
    const second = await submit(["-J", "solo", "-d", "singleton", "--wrap", "true"]);
    expect((await c.job(second)).reason).toBe("Dependency");
    const other = await submit(["-J", "not-solo", "-d", "singleton", "--wrap", "true"]);
    const [a, b] = [await c.waitJob(first, ["COMPLETED"]), await c.waitJob(second, ["COMPLETED"])];
    expect(Date.parse(b.startTime)).toBeGreaterThanOrEqual(Date.parse(a.endTime));
    expect((await c.waitJob(other, ["COMPLETED"])).state).toBe("COMPLETED");
  }, 30_000);
});

describe("holds, begin times and waiting", () => {
  test("--hold, ebb hold and ebb release; a begin time holds a job back until then", async () => {
    const held = await submit(["--hold", "--wrap", "echo released"]);
    expect((await c.job(held)).reason).toBe("JobHeldUser");
    expect((await c.ebb(["queue"])).stdout).toMatch(new RegExp(`^${held}\\s+wrap\\s+\\S+\\s+PENDING.*\\(JobHeldUser\\)$`, "m"));
    expect((await c.ebb(["release", String(held)])).code).toBe(0);
    expect((await c.waitJob(held, ["COMPLETED"])).state).toBe("COMPLETED");
    const late = await submit(["--begin", "now+2", "--wrap", "true"]);
    const pending = await c.job(late);
    expect(pending.reason).toBe("BeginTime");
    expect((await c.ebb(["hold", String(late)])).code).toBe(0);
    expect((await c.job(late)).reason).toBe("JobHeldUser");
    expect((await c.ebb(["release", String(late)])).code).toBe(0);
    const ran = await c.waitJob(late, ["COMPLETED"], 15_000);
    expect(Date.parse(ran.startTime)).toBeGreaterThanOrEqual(Date.parse(pending.beginTime));
    const done = await c.ebb(["hold", String(held)]);
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 1, stderr: `ebb hold: job ${held}: job ${held} is COMPLETED; only pending jobs can be held\n` });
  }, 30_000);

  test("pending jobs say why they wait in Slurm's words: Resources, Priority", async () => {
    const busy = await submit(["-N", "2", "--exclusive", "-t", "10:00", "--wrap", "sleep 60"]);
    await c.waitJob(busy, ["RUNNING"]);
    const big = await submit(["-N", "3", "--exclusive", "--wrap", "true"]);
    const long = await submit(["-N", "1", "-t", "20:00", "--wrap", "true"]);
    const reasons = await waitFor("both reasons", async () => {
      const [a, b] = await Promise.all([c.job(big), c.job(long)]);
      return a.reason === "Resources" && b.reason === "Priority" ? [a, b] : undefined;
    });
    expect(reasons[1].reasonDetail).toBe(`priority: would delay job ${big}`);
    const q = (await c.ebb(["queue"])).stdout;
    expect(q).toMatch(new RegExp(`^${big}\\s.*PENDING.*\\(Resources\\)$`, "m"));
    expect(q).toMatch(new RegExp(`^${long}\\s.*PENDING.*\\(Priority\\)$`, "m"));
    expect((await c.ebb(["cancel", String(long), String(big), String(busy)])).code).toBe(0);
  }, 30_000);

  test("submit --wait and ebb wait exit with the job's exit code", async () => {
    const ok = await c.ebb(["submit", "--wait", "--wrap", "true"]);
    expect(ok.code).toBe(0);
    const failing = await c.ebb(["submit", "-W", "--wrap", "exit 3"]);
    expect(failing.code).toBe(3);
    const id = idOf(failing.stdout);
    const w = await c.ebb(["wait", String(id)]);
    expect({ code: w.code, stderr: w.stderr }).toEqual({ code: 3, stderr: `ebb wait: job ${id} FAILED (exit code 3): exit code 3\n` });
    const array = await c.ebb(["submit", "-W", "-a", "1-3", "--wrap", 'exit $((EBB_ARRAY_TASK_ID * 2))']);
    expect(array.code).toBe(6);
  }, 30_000);
});

describe("where a job runs and what it gets", () => {
  test("-e writes stderr apart from -o, for batch and command jobs", async () => {
    const id = await submit(["-o", "out-%j.txt", "-e", "err-%j-%x.txt", "-J", "split", "--wrap", "echo to-out; echo to-err >&2"]);
    await c.waitJob(id, ["COMPLETED"]);
    expect([c.read(`out-${id}.txt`), c.read(`err-${id}-split.txt`)]).toEqual(["to-out\n", "to-err\n"]);
    const cmd = await c.submit({ argv: ["sh", "-c", "echo out $EBB_PROCID; echo err $EBB_PROCID >&2"], nodes: 2, tasks: 2, output: "cmd-out-%j", error: "cmd-err-%j" });
    const job = await c.waitJob(cmd, ["COMPLETED"]);
    expect(job.error).toBe(join(c.dir, `cmd-err-${cmd}`));
    expect(c.read(`cmd-out-${cmd}`).split("\n").filter(Boolean).sort()).toEqual(["out 0", "out 1"]);
    expect(c.read(`cmd-err-${cmd}`).split("\n").filter(Boolean).sort()).toEqual(["err 0", "err 1"]);
  });

  test("--nodelist and --exclude pick the nodes; %N is the first node", async () => {
    const w = await submit(["-w", "node02", "-o", "on-%N.out", "--wrap", "echo $EBB_JOB_NODELIST"]);
    expect((await c.waitJob(w, ["COMPLETED"])).allocation).toEqual(["node02"]);
    expect(c.read("on-node02.out")).toBe("node02\n");
    const x = await submit(["-x", "node[01-02]", "--wrap", "true"]);
    expect((await c.waitJob(x, ["COMPLETED"])).allocation).toEqual(["node03"]);
    const two = await submit(["-N", "2", "--nodelist", "node03", "--exclude", "node02", "--wrap", "true"]);
    expect((await c.waitJob(two, ["COMPLETED"])).allocation.sort()).toEqual(["node01", "node03"]);
    const run = await c.ebb(["run", "-N", "2", "-x", "node02", "-l", "sh", "-c", "echo $EBB_NODENAME"]);
    expect({ code: run.code, out: run.stdout.split("\n").filter(Boolean).sort() }).toEqual({ code: 0, out: ["0: node01", "1: node03"] });
    const missing = await c.ebb(["submit", "-w", "node09", "--wrap", "true"]);
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 1, stderr: "ebb submit: nodelist: node node09 does not exist; see GET /v1/nodes (field: nodelist)\n" });
  });

  test("--export, -D, --wrap and a script on standard input", async () => {
    mkdirSync(join(c.dir, "sub"), { recursive: true });
    const env = { FOO: "foo-value" };
    const none = await submit(["--export=NONE", "-o", "none.out", "--wrap", 'echo "${FOO:-unset}"'], env);
    const some = await submit(["--export=FOO,BAR=bar", "-o", "some.out", "--wrap", 'echo "$FOO $BAR ${HOME:+home-from-agent}"'], env);
    const all = await submit(["-o", "all.out", "--wrap", 'echo "$FOO"'], env);
    const dir = await submit(["-D", "sub", "-o", "pwd.out", "--wrap", "pwd"]);
    for (const id of [none, some, all, dir]) await c.waitJob(id, ["COMPLETED"]);
    expect([c.read("none.out"), c.read("some.out"), c.read("all.out"), c.read("sub/pwd.out")]).toEqual(["unset\n", "foo-value bar home-from-agent\n", "foo-value\n", `${join(c.dir, "sub")}\n`]);
    const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "submit", "--parsable", "-o", "stdin.out"], { cwd: c.dir, env: c.env, stdin: new Blob(["#!/bin/sh\n#EBB -J from-stdin\necho from stdin\n"]), stdout: "pipe", stderr: "pipe" });
    const r = await outputOf(proc as never);
    expect(r.code).toBe(0);
    const job = await c.waitJob(Number(r.stdout.trim()), ["COMPLETED"]);
    expect([job.name, c.read("stdin.out")]).toEqual(["from-stdin", "from stdin\n"]);
  });

  test("--test-only says when and where a job would start, and submits nothing", async () => {
    const before = (await c.api("GET", "/v1/jobs")).json.jobs.length;
    const now = await c.ebb(["submit", "--test-only", "-N", "3", "--wrap", "true"]);
    // Where: each node with the cores and memory the job would hold there.
    expect(now.code).toBe(0);
    expect(now.stdout).toMatch(/^ebb submit: it would start now on node01 \(core \d, \d+ MiB\), node02 \(core \d, \d+ MiB\), node03 \(core \d, \d+ MiB\) \(test only, nothing submitted\)\n$/);
    const busy = await submit(["-N", "3", "--exclusive", "-t", "10:00", "--wrap", "sleep 60"]);
    await c.waitJob(busy, ["RUNNING"]);
    const later = await c.ebb(["submit", "--test-only", "--json", "-w", "node02", "--wrap", "true"]);
    const t = JSON.parse(later.stdout);
    const started = Date.parse((await c.job(busy)).startTime);
    expect(t.nodes).toEqual(["node02"]);
    expect(Math.abs(Date.parse(t.start) - (started + 600_000))).toBeLessThan(2000);
    expect((await c.api("GET", "/v1/jobs")).json.jobs.length).toBe(before + 1);
    await c.ebb(["cancel", String(busy)]);
  });
});

describe("jobs that submit jobs, and history", () => {
  test("a batch job submits its successor (recorded as its own), and may not touch other jobs", async () => {
    const other = await submit(["--hold", "--wrap", "true"]);
    writeFileSync(
      join(c.dir, "chain.sh"),
      [
        "#!/bin/sh",
        "#EBB -J first-link",
        `ebb cancel ${other} 2>&1 | sed 's/^/cancel: /'`,
        'next=$(ebb submit --parsable -J second-link -d "afterok:$EBB_JOB_ID" -o next.out --wrap "echo successor of $EBB_JOB_ID")',
        'echo "submitted $next"',
        'ebb show "$next" >/dev/null && echo "can see $next"',
      ].join("\n"),
    );
    const first = await submit(["-o", "chain.out", "chain.sh"]);
    expect((await c.waitJob(first, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
    const out = c.read("chain.out");
    expect(out).toContain(`cancel: ebb cancel: job ${other}: this token is for job ${first}, not job ${other}`);
    const next = Number(/submitted (\d+)/.exec(out)![1]);
    expect(out).toContain(`can see ${next}`);
    const succ = await c.waitJob(next, ["COMPLETED", "FAILED"]);
    expect({ state: succ.state, submittedBy: succ.submittedBy, name: succ.name }).toEqual({ state: "COMPLETED", submittedBy: first, name: "second-link" });
    expect(succ.user).toBe((await c.job(first)).user);
    expect(c.read("next.out")).toBe(`successor of ${first}\n`);
    expect((await c.job(other)).state).toBe("PENDING");
    await c.ebb(["cancel", String(other)]);
  }, 30_000);

  test("ebb history filters by time, state, name and user", async () => {
    const failed = await submit(["-J", "hist-fail", "-W", "--wrap", "exit 2"]).catch(() => 0);
    void failed;
    const ok = await c.ebb(["submit", "-W", "-J", "hist-ok", "--wrap", "true"]);
    const okId = idOf(ok.stdout);
    // --since now-1day: these jobs, even when the test runs across midnight (the default is since midnight).
    const json = async (args: string[]) => JSON.parse((await c.ebb(["history", "--json", "--since", "now-1day", ...args])).stdout).jobs as any[];
    const byName = await json(["--name", "hist-ok"]);
    expect(byName.map((j) => j.id)).toEqual([okId]);
    const failedOnes = await json(["--state", "FAILED"]);
    expect(failedOnes.length).toBeGreaterThan(0);
    expect(failedOnes.every((j) => j.state === "FAILED")).toBe(true);
    expect(failedOnes.some((j) => j.name === "hist-fail" && j.exitCode === 2)).toBe(true);
    expect(await json(["--since", "now+1hour", "--name", "hist-ok"])).toEqual([]);
    expect(await json(["--until", "now-1hour"])).toEqual([]);
    const user = byName[0].user as string;
    expect((await json(["--user", user, "--name", "hist-ok"])).length).toBe(1);
    expect(await json(["--user", "nobody-at-all"])).toEqual([]);
    const table = await c.ebb(["history", "--since", "now-1day", "--name", "hist-fail"]);
    expect(table.stdout).toMatch(/^JOBID\s+NAME\s+USER\s+STATE\s+EXIT\s+ELAPSED\s+NODES\s+CPUS\/MEM\/GPUS\s+CPUTIME\s+MAXMEM\s+GPUTIME\s+SUBMIT\s+START\s+END$/m);
    expect(table.stdout).toMatch(new RegExp(`^\\d+\\s+hist-fail\\s+${user}\\s+FAILED\\s+2\\s+\\S+\\s+1\\s+1c \\S+\\s+\\S+\\s+\\S+\\s+\\d{4}-`, "m"));
    const bad = await c.ebb(["history", "--state", "DONE"]);
    expect({ code: bad.code, stderr: bad.stderr }).toMatchObject({ code: 2, stderr: expect.stringContaining("ebb history: --state DONE: expected some of") });
  }, 30_000);
});

test("the OpenAPI document has the new routes and fields", async () => {
  const doc = (await c.api("GET", "/v1/openapi.json")).json;
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/jobs/test", "/v1/jobs/{id}/hold", "/v1/jobs/{id}/release"]));
  const submit = doc.paths["/v1/jobs"].post.requestBody.content["application/json"].schema.properties;
  for (const f of ["array", "dependency", "hold", "begin", "exclude", "nodelist", "error"]) expect(submit[f]).toBeDefined();
  const view = doc.paths["/v1/jobs"].get.responses["200"].content["application/json"].schema.properties.jobs.items.properties;
  for (const f of ["arrayJobId", "arrayTaskId", "arrayLimit", "held", "dependency", "beginTime", "reasonDetail", "user", "submittedBy", "resizes", "error"]) expect(view[f]).toBeDefined();
  expect(doc.paths["/v1/jobs"].get.parameters.map((p: any) => p.name)).toEqual(["state", "limit", "since", "until", "name", "user", "partition", "array", "id", "before"]);
});

describe("shell completion", () => {
  async function withEbbOnPath(): Promise<Record<string, string>> {
    const bin = join(c.dir, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "ebb"), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "src/main.ts")}" "$@"\n`);
    chmodSync(join(bin, "ebb"), 0o755);
    return { ...c.env, PATH: `${bin}:${process.env.PATH}` };
  }

  test("bash: the script loads, completes commands and flags, and job ids from the queue", async () => {
    const env = await withEbbOnPath();
    const held = await submit(["--hold", "--wrap", "true"]);
    const script = [
      "source <(ebb completion bash)",
      "complete -p ebb",
      'COMP_WORDS=(ebb sub); COMP_CWORD=1; _ebb; echo "cmds: ${COMPREPLY[*]}"',
      'COMP_WORDS=(ebb submit --arr); COMP_CWORD=2; _ebb; echo "flags: ${COMPREPLY[*]}"',
      'COMP_WORDS=(ebb cancel ""); COMP_CWORD=2; _ebb; echo "jobs: ${COMPREPLY[*]}"',
    ].join("\n");
    const r = await runProcess(["bash", "-c", script], { env, cwd: c.dir });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("complete -F _ebb ebb");
    expect(r.stdout).toContain("cmds: submit\n");
    expect(r.stdout).toContain("flags: --array\n");
    expect(r.stdout).toMatch(new RegExp(`jobs: .*\\b${held}\\b`));
    await c.ebb(["cancel", String(held)]);
  });

  test("zsh and fish: the scripts load and complete commands", async () => {
    const env = await withEbbOnPath();
    const zsh = await runProcess(["zsh", "-f", "-c", "autoload -U compinit && compinit -u -D && source <(ebb completion zsh) && print -r -- $_comps[ebb]"], { env, cwd: c.dir });
    expect({ code: zsh.code, stdout: zsh.stdout, stderr: zsh.stderr }).toEqual({ code: 0, stdout: "_ebb\n", stderr: "" });
    const fish = await runProcess(["fish", "--no-config", "-c", "ebb completion fish | source; complete -C 'ebb sub'; complete -C 'ebb submit --arr'"], { env, cwd: c.dir });
    expect(fish.stderr).toBe("");
    expect(fish.stdout).toMatch(/^submit\t/m);
    expect(fish.stdout).toMatch(/^--array\t/m);
  });
});
