import { expect, test } from "bun:test";
import { readCost } from "../../src/pmi/index.ts";
import { PMI_READ_COST, PMI_REQUEST_COST } from "../../src/pmi/limits.ts";

test("a read costs its bytes, PMI_READ_COST, and PMI_REQUEST_COST for each request in it, PMI-1 lines and PMI-2 frames alike", () => {
  const v1 = "cmd=get_maxes\ncmd=barrier_in\n";
  const v2 = "    26cmd=kvs-get;key=a;value=;";
  expect([readCost(v1), readCost(new TextEncoder().encode(v1)), readCost(v2), readCost("x"), readCost("value=cmd")]).toEqual([
    v1.length + PMI_READ_COST + 2 * PMI_REQUEST_COST,
    v1.length + PMI_READ_COST + 2 * PMI_REQUEST_COST,
    v2.length + PMI_READ_COST + PMI_REQUEST_COST,
    1 + PMI_READ_COST,
    9 + PMI_READ_COST,
  ]);
  // A view into a larger buffer counts its own bytes only.
  const big = new TextEncoder().encode("cmd=a\ncmd=b\n");
  expect(readCost(big.subarray(6))).toBe(6 + PMI_READ_COST + PMI_REQUEST_COST);
});
