import { describe, expect, test } from "bun:test";
import { crowdedRankVars, ranksOutnumberCpus } from "../../src/roles/agent/crowded-ranks.ts";

describe("ranks that outnumber their CPUs", () => {
  test("on CPUs of the node's own, the node's ranks are counted; on shared ones, the step's", () => {
    expect(ranksOutnumberCpus(2, 27, 27, true)).toBe(true);
    expect(ranksOutnumberCpus(2, 2, 8, true)).toBe(false);
    expect(ranksOutnumberCpus(2, 2, 8, false)).toBe(true);
    expect(ranksOutnumberCpus(2, 1, 2, false)).toBe(false);
  });

  test("are told to run one OpenMP thread, unless their environment names a number", () => {
    expect(crowdedRankVars({}, true)).toEqual({ OMP_NUM_THREADS: "1" });
    expect(crowdedRankVars({ OMP_NUM_THREADS: "4" }, true)).toEqual({});
    expect(crowdedRankVars({}, false)).toEqual({});
  });
});
