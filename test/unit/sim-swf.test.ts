import { describe, expect, test } from "bun:test";
import { parseSwf, SWF_FIELDS, traceJobs, traceMachine } from "../../src/sim/swf.ts";

const row = (...v: number[]) => [...v, ...new Array(18 - v.length).fill(-1)].join(" ");

describe("SWF reader", () => {
  test("reads all 18 fields and the header", () => {
    const t = parseSwf(`; Version: 2\n; MaxNodes: 128\n${"1 10 -1 300 8 -1 -1 16 600 -1 1 7 3 2 1 0 -1 -1"}\n`);
    expect(t.header).toMatchObject({ Version: "2", MaxNodes: "128" });
    expect(t.errors).toEqual([]);
    expect(SWF_FIELDS).toHaveLength(18);
    expect(t.records[0]!.record).toMatchObject({ jobNumber: 1, submitTime: 10, runTime: 300, allocatedProcs: 8, requestedProcs: 16, requestedTime: 600, userId: 7, thinkTime: -1 });
    expect(t.records[0]!.line).toBe(3);
  });

  test("bad lines are reported with their line number and left out", () => {
    const t = parseSwf([row(1, 0, -1, 10, 1), "2 0 -1 10", row(3, 0, -1, 1e3, 1).replace("1000", "ten"), row(4, 5, -1, 10, -3), "", row(5, 9, -1, 10, 2)].join("\n"));
    expect(t.records.map((r) => r.record.jobNumber)).toEqual([1, 5]);
    expect(t.errors.map((e) => e.line)).toEqual([2, 3, 4]);
    expect(t.errors[0]!.message).toContain("expected 18 fields, found 4");
    expect(t.errors[1]!.message).toContain("field 4 (runTime)");
    expect(t.errors[2]!.message).toContain("negative");
  });

  test("unknown sizes or run times are skipped, unknown requested time falls back to the run time, a known one binds", () => {
    const t = parseSwf([row(1, 0, -1, -1, 4), row(2, 0, -1, 50, -1, -1, -1, -1), row(3, 7, -1, 50, -1, -1, -1, 6), row(4, 3, -1, 20, 2, -1, -1, -1, 10)].join("\n"));
    const { jobs, skipped } = traceJobs(t);
    expect(skipped.map((s) => s.line)).toEqual([1, 2]);
    expect(jobs.map((j) => [j.id, j.procs, j.estimate])).toEqual([
      // Job 4 ran 20 s and asked for 10: its limit is 10 (the simulator kills it there, as live).
      [4, 2, 10],
      [3, 6, 50],
    ]);
  });

  test("the machine is the trace's processors, since SWF sizes are processors", () => {
    // HPC2N's header: 120 dual-processor nodes. Its jobs' sizes go up to 240 processors.
    const hpc2n = { MaxNodes: "120", MaxProcs: "240" };
    expect(traceMachine(hpc2n, 1)).toEqual({ nodes: 240, note: expect.stringContaining("--cores-per-node 2 packs them on 120 nodes") });
    expect(traceMachine(hpc2n, 2)).toEqual({ nodes: 120 });
    expect(traceMachine(hpc2n, 4)!.nodes).toBe(60);
    expect(traceMachine({ MaxNodes: "256" }, 1)).toEqual({ nodes: 256 });
    expect(traceMachine({ MaxNodes: "256" }, 4)).toEqual({ nodes: 64 });
    expect(traceMachine({ MaxNodes: "240", MaxProcs: "240" }, 1)).toEqual({ nodes: 240 });
    expect(traceMachine({ MaxProcs: "430" }, 1)).toEqual({ nodes: 430 });
    // A batch partition smaller than the machine (CTC-SP2 style): its processors, with a note.
    expect(traceMachine({ MaxNodes: "512", MaxProcs: "430" }, 1)).toMatchObject({ nodes: 430, note: expect.not.stringContaining("packs") });
    expect(traceMachine({ MaxNodes: "UNKNOWN" }, 1)).toBeUndefined();
    expect(traceMachine({}, 1)).toBeUndefined();
  });
});

