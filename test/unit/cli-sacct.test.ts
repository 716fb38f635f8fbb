import { expect, test } from "bun:test";
import { sacctToHistory } from "../../src/cli/sacct.ts";
import { UsageError } from "../../src/cli/errors.ts";
import { parseFormat, renderFormat } from "../../src/cli/job-format.ts";
import { selectedRows, stepSelection, withSteps } from "../../src/cli/step-rows.ts";
import type { JobView } from "../../src/api/schemas.ts";

const refusal = (argv: string[]) => {
  try {
    sacctToHistory(argv);
    return "accepted";
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return e.message;
  }
};

test("a script's closing sacct: its job, its fields, no header, parsable; a step's id names its job", () => {
  expect(sacctToHistory(["-j", "42", "--format=JobID,JobName,Elapsed,MaxRSS", "-n", "-P", "-X"])).toEqual(["--jobs=42", "--noheader", "--parsable2", "--format=JobID,JobName,Elapsed,MaxRSS"]);
  expect(sacctToHistory(["--jobs=42.batch,43.0", "-o", "State", "-p"])).toEqual(["--jobs=42.batch,43.0", "--parsable", "--steps", "--format=State"]);
  expect(sacctToHistory(["-j42", "-b"])).toEqual(["--jobs=42", "--steps", "--format=JobID,State,ExitCode"]);
});

test("sacct's defaults: its own fields (but Account); short states are long ones; flags that change nothing here pass", () => {
  expect(sacctToHistory([])).toEqual(["--steps", "--format=JobID,JobName,Partition,AllocCPUS,State,ExitCode"]);
  expect(sacctToHistory(["-s", "CD,F", "-u", "alice", "-S", "now-2h", "--units=G", "-a", "--delimiter=,", "--allocations"])).toEqual(["--state=COMPLETED,FAILED", "--user=alice", "--since=now-2h", "--delimiter=,", "--format=JobID,JobName,Partition,AllocCPUS,State,ExitCode"]);
});

test("what ebb's sacct does not take is refused, naming what it takes", () => {
  expect(refusal(["--bogus"])).toBe("--bogus: ebb's sacct takes -j, -o/--format, -n, -P, -p, -X, -b, -l, -u, -S, -E, -s, -r and --name (ebb history --help has the rest)");
  expect(refusal(["-j"])).toBe("-j needs a value");
});

test("steps: a batch job's line, then ID.batch and ID.0, ID.1... with their names (srun -J's, else the program's), states, exit codes and nodes; a pending job has none", () => {
  const job = {
    id: 7, name: "train", kind: "batch", state: "FAILED", exitCode: 3, partition: "all", user: "alice", allocation: ["n1", "n2"], startTime: "2026-01-01T00:00:00Z", endTime: "2026-01-01T00:00:10Z",
    shares: [{ node: "n1", cpus: 4 }, { node: "n2", cpus: 2 }], usage: null, arrayJobId: null, arrayTaskId: null,
  } as unknown as JobView;
  const steps = [
    { stepId: 0, argv: ["/usr/bin/hostname"], tasks: 2, nodes: ["n1", "n2"], state: "COMPLETED", startTime: "2026-01-01T00:00:01Z", endTime: "2026-01-01T00:00:02Z", exitCode: 0, name: null },
    { stepId: 1, argv: ["false"], tasks: 1, nodes: ["n2"], state: "FAILED", startTime: "2026-01-01T00:00:03Z", endTime: "2026-01-01T00:00:05Z", exitCode: 1, name: "check" },
  ];
  const format = parseFormat("JobID,JobName,Partition,AllocCPUS,State,ExitCode,Elapsed,NodeList");
  if ("error" in format) throw new Error(format.error);
  expect(renderFormat(format, withSteps(job, { steps }, "7", 0), false, "|")).toBe(
    ["7|train|all|6|FAILED|3:0|00:00:10|n[1-2]", "7.batch|batch||4|FAILED|3:0|00:00:10|n1", "7.0|hostname||6|COMPLETED|0:0|00:00:01|n[1-2]", "7.1|check||2|FAILED|1:0|00:00:02|n2", ""].join("\n"),
  );
  expect(withSteps({ ...job, startTime: null }, { steps: [] }, "7", 0)).toHaveLength(1);
  // sacct -j 7.batch, -j 7.1: that line alone; -j 7,7.1: the job's every line.
  const labels = (value: string) => {
    const { ids, steps: asked } = stepSelection(value);
    return [ids, selectedRows(withSteps(job, { steps }, "7", 0), asked).map((r) => r.ctx.label)];
  };
  expect(labels("7.batch")).toEqual(["7", ["7.batch"]]);
  expect(labels("7.1,7.0")).toEqual(["7", ["7.0", "7.1"]]);
  expect(labels("7,7.1")).toEqual(["7", ["7", "7.batch", "7.0", "7.1"]]);
});
