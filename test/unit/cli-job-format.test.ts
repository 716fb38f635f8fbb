/** --format of ebb queue and ebb history (squeue's %-codes and field lists), squeue --start's rows, and ebb usage's table: plain data in, text out. */
import { describe, expect, test } from "bun:test";
import type { JobView } from "../../src/api/schemas.ts";
import { parseFormat, renderFormat, type Format } from "../../src/cli/job-format.ts";
import { startsText } from "../../src/cli/queue.ts";
import { usageTable } from "../../src/cli/usage.ts";

const NOW = Date.parse("2030-01-15T10:00:00Z");
const iso = (msAgo: number) => new Date(NOW - msAgo).toISOString();

function job(id: number, over: Partial<JobView> = {}): JobView {
  return {
    id, name: `job${id}`, kind: "batch", state: "RUNNING", reason: null, nodes: 2, minNodes: 2, maxNodes: 2, elastic: false, tasks: null, tasksPerNode: null, overcommit: false,
    timeLimit: 3600, argv: ["./solver", "in.dat"], cwd: "/home/alice/run", output: null, private: false, submitTime: iso(600_000), startTime: iso(300_000), endTime: null, exitCode: null,
    allocation: ["node01", "node02"], mtct: null, reasonDetail: null, arrayJobId: null, arrayTaskId: null, arrayLimit: null, held: false, dependency: null, beginTime: null,
    exclude: [], nodelist: [], sizes: null, error: null, user: "alice", submittedBy: null, resizes: 0, resources: null, shares: [], usage: null, gpuSeconds: 0, partition: null, ...over,
  };
}
const parsed = (text: string) => parseFormat(text) as Format;
const rows = (jobs: JobView[]) => jobs.map((job) => ({ job, ctx: { label: String(job.id), now: NOW } }));

describe("--format", () => {
  test("squeue's %-codes: widths pad and cut, '.' aligns right, other text is kept, %% is a %", () => {
    const f = parsed("%.4i|%-6u|%t %M/%l %D %R %%");
    expect(renderFormat(f, rows([job(7), job(8, { state: "PENDING", reason: "Priority", startTime: null, allocation: [], user: "bob" })]))).toBe(
      ["JOBI|USER  |ST TIME/TIME_LIMIT NODES NODELIST(REASON) %", "   7|alice |R 5:00/1:00:00 2 node[01-02] %", "   8|bob   |PD 0:00/1:00:00 2 (Priority) %", ""].join("\n"),
    );
    expect(renderFormat(parsed("%i %T"), rows([job(7)]), false)).toBe("7 RUNNING\n");
    expect(renderFormat(parsed("%i %P|"), rows([job(7, { partition: "gpu" }), job(8)]))).toBe("JOBID PARTITION|\n7 gpu|\n8 |\n");
    expect(renderFormat(parsed("JobID,Partition"), rows([job(7, { partition: "gpu" })]), false)).toBe("7  gpu\n");
    // Slurm 22.05's letters (side by side): %A the job's own id, %a the account, %F/%K the array's id and the task's, %q the QOS.
    expect(renderFormat(parsed("%A|%a|%F|%K|%q"), rows([job(9, { arrayJobId: 8, arrayTaskId: 1 }), job(7)]))).toBe("JOBID|ACCOUNT|ARRAY_JOB_ID|ARRAY_TASK_ID|QOS\n9|(null)|8|1|(null)\n7|(null)|7|N/A|(null)\n");
  });

  test("field lists as squeue -O and sacct --format take them, a width after % or :, names without case", () => {
    const f = parsed("JobID,user,State%4,Elapsed:.8,ExitCode");
    expect(renderFormat(f, rows([job(7, { state: "COMPLETED", endTime: iso(0), exitCode: 0 })]))).toBe(["JOBID  USER   STAT   ELAPSED  EXITCODE", "7      alice  COMP  00:05:00  0:0", ""].join("\n"));
  });

  test("another user's private parts print as (private); a batch job's command as (batch script)", () => {
    const f = parsed("%o|%Z");
    expect(renderFormat(f, rows([job(1, { private: true, argv: null, cwd: "" }), job(2, { argv: null })]), false)).toBe("(private)|(private)\n(batch script)|/home/alice/run\n");
  });

  test("errors name what is wrong and what there is", () => {
    expect(parseFormat("%z")).toEqual({ error: expect.stringMatching(/^%z is not a field code; codes: %i JobID, /) });
    expect(parseFormat("%.8")).toEqual({ error: expect.stringContaining('"%.8": a % needs a field code') });
    expect(parseFormat("JobID,Bogus")).toEqual({ error: expect.stringMatching(/^"Bogus" is not a field; fields: JobID, /) });
    expect(parseFormat(" ")).toHaveProperty("error");
  });
});

test("squeue --start: pending jobs only, the soonest first, N/A without an estimate, where they would start", () => {
  const jobs = [job(1), job(2, { state: "PENDING", startTime: null, allocation: [], reason: "Resources" }), job(3, { state: "PENDING", startTime: null, allocation: [], reason: "Priority" }), job(4, { state: "PENDING", startTime: null, allocation: [], reason: "Dependency" })];
  const starts = { time: iso(0), complete: true, message: null, jobs: [{ id: 3, start: new Date(NOW + 60_000).toISOString(), nodes: ["node01"] }, { id: 2, start: new Date(NOW + 3_600_000).toISOString(), nodes: ["node01", "node02"] }] };
  const lines = startsText(jobs, starts, undefined, false, NOW).trimEnd().split("\n");
  expect(lines[0]!.split(/\s+/)).toEqual(["JOBID", "NAME", "USER", "ST", "START_TIME", "NODES", "SCHEDNODES", "NODELIST(REASON)"]);
  expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(["3", "2", "4"]);
  expect(lines[1]).toMatch(/ node01 +\(Priority\)$/);
  expect(lines[2]).toMatch(/ node\[01-02\] +\(Resources\)$/);
  expect(lines[3]).toMatch(/N\/A .*\(null\)\s+\(Dependency\)$/);
});

test("ebb usage: a line per user with node- and core-hours and each one's share of the core-hours, and the total; GPU-hours once a GPU was held", () => {
  const usage = {
    since: iso(7_200_000),
    until: iso(0),
    users: [
      { user: "alice", jobs: 3, nodeSeconds: 7200, coreSeconds: 27000, gpuSeconds: 0 },
      { user: "bob", jobs: 1, nodeSeconds: 3600, coreSeconds: 9000, gpuSeconds: 0 },
    ],
    total: { jobs: 4, nodeSeconds: 10800, coreSeconds: 36000, gpuSeconds: 0 },
  };
  expect(usageTable(usage).split("\n").slice(1)).toEqual(["USER   JOBS  NODE-HOURS  CORE-HOURS  SHARE", "alice  3     2.00        7.50        75.0%", "bob    1     1.00        2.50        25.0%", "TOTAL  4     3.00        10.00       100.0%", ""]);
  usage.users[1]!.gpuSeconds = usage.total.gpuSeconds = 9000;
  expect(usageTable(usage).split("\n").slice(1)).toEqual([
    "USER   JOBS  NODE-HOURS  CORE-HOURS  GPU-HOURS  SHARE",
    "alice  3     2.00        7.50        0.00       75.0%",
    "bob    1     1.00        2.50        2.50       25.0%",
    "TOTAL  4     3.00        10.00       2.50       100.0%",
    "",
  ]);
  expect(usageTable({ since: iso(1), until: iso(0), users: [], total: { jobs: 0, nodeSeconds: 0, coreSeconds: 0, gpuSeconds: 0 } })).toEndWith("no job held nodes then\n");
});

test("GPU time: GPUs held times the time held, as a duration (GPUTime in sacct's field lists, GPUTIME in ebb history); empty for a job that held none", () => {
  const jobs = [job(7, { state: "COMPLETED", endTime: iso(0), gpuSeconds: 2 * 3600 + 30 }), job(8, { state: "COMPLETED", endTime: iso(0) })];
  expect(renderFormat(parsed("JobID,GPUTime,Elapsed"), rows(jobs))).toBe(["JOBID  GPUTIME  ELAPSED", "7      2:00:30  00:05:00", "8               00:05:00", ""].join("\n"));
});
