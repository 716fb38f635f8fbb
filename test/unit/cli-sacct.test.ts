import { expect, test } from "bun:test";
import { sacctToHistory } from "../../src/cli/sacct.ts";
import { UsageError } from "../../src/cli/errors.ts";

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
  expect(sacctToHistory(["--jobs=42.batch,43.0", "-o", "State", "-p"])).toEqual(["--jobs=42,43", "--parsable", "--format=State"]);
  expect(sacctToHistory(["-j42", "-b"])).toEqual(["--jobs=42", "--format=JobID,State,ExitCode"]);
});

test("sacct's defaults: its own fields (but Account); short states are long ones; flags that change nothing here pass", () => {
  expect(sacctToHistory([])).toEqual(["--format=JobID,JobName,Partition,AllocCPUS,State,ExitCode"]);
  expect(sacctToHistory(["-s", "CD,F", "-u", "alice", "-S", "now-2h", "--units=G", "-a", "--delimiter=,"])).toEqual(["--state=COMPLETED,FAILED", "--user=alice", "--since=now-2h", "--delimiter=,", "--format=JobID,JobName,Partition,AllocCPUS,State,ExitCode"]);
});

test("what ebb's sacct does not take is refused, naming what it takes", () => {
  expect(refusal(["--bogus"])).toBe("--bogus: ebb's sacct takes -j, -o/--format, -n, -P, -p, -X, -b, -l, -u, -S, -E, -s, -r and --name (ebb history --help has the rest)");
  expect(refusal(["-j"])).toBe("-j needs a value");
});
