/** squeue's command lines as ebb queue's (cli/squeue.ts): its flags, short states and default columns. */
import { describe, expect, test } from "bun:test";
import { squeueToQueue } from "../../src/cli/squeue.ts";

const DEFAULT = "--format=%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

describe("squeue as ebb queue", () => {
  test("squeue's default columns unless -o or -O names others", () => {
    expect(squeueToQueue([])).toEqual([DEFAULT]);
    expect(squeueToQueue(["-o", "%i %T"])).toEqual(["--format=%i %T"]);
    expect(squeueToQueue(["--Format=JobID,State"])).toEqual(["--format=JobID,State"]);
  });

  test("-h is --noheader, -t takes squeue's short states, values attached or apart", () => {
    expect(squeueToQueue(["-u", "alice", "-h", "-j123", "--partition=gpu", "-t", "R,pd,FAILED", "--me"])).toEqual([
      "--user=alice",
      "--noheader",
      "--jobs=123",
      "--partition=gpu",
      "--state=RUNNING,PENDING,FAILED",
      "--me",
      DEFAULT,
    ]);
  });

  test("-j without -t lists an ended job only within Slurm's MinJobAge, so that a `while squeue -h -j $id` loop ends", () => {
    expect(squeueToQueue(["-h", "-j", "12"])).toEqual(["--noheader", "--jobs=12", "--ended-within=300", DEFAULT]);
    expect(squeueToQueue(["-h", "-j", "12", "-t", "all"])).not.toContain("--ended-within=300");
    expect(squeueToQueue(["-u", "alice"])).not.toContain("--ended-within=300");
  });

  test("a flag it does not map is refused, naming those it takes", () => {
    expect(() => squeueToQueue(["--start"])).toThrow("--start: ebb's squeue takes -u, --me, -j, -n, -p, -t, -o, -O, -h, -r and -l");
    expect(() => squeueToQueue(["-u"])).toThrow("-u needs a value");
  });
});
