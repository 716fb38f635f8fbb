import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SingleNodeJob, launchRanks } from "../support/pmi-job.ts";

/** Bun processes using PmiClient over an inherited socketpair (PMI_FD=3) and over PMI_PORT. */

const RANK = join(import.meta.dir, "fixtures", "pmi-rank.ts");

describe("PmiClient in real Bun ranks", () => {
  for (const [via, pipelined] of [["fd", false], ["port", false], ["fd", true], ["port", true]] as const) {
    test(`3 ranks over ${via === "fd" ? "PMI_FD" : "PMI_PORT + PMI_ID"}${pipelined ? ", pipelined (EBB_PMI_PIPELINE=1)" : ""}`, async () => {
      const job = new SingleNodeJob(3, {
        extension: (rank, cmd, args) => (cmd === "ebb-probe" ? Promise.resolve({ status: "none", seen: `${rank}@${args.iteration}` }) : undefined),
      });
      const out = await launchRanks(process.execPath, job, { args: [RANK], via, env: pipelined ? { EBB_PMI_PIPELINE: "1" } : {} });
      const cards = [0, 1, 2].map((r) => `rank ${r} at 10.0.0.${r}:7000`);
      for (const o of out) {
        expect({ code: o.code, stderr: o.stderr }).toEqual({ code: 0, stderr: "" });
        expect(JSON.parse(o.stdout)).toEqual({
          rank: o.rank,
          size: 3,
          kvsname: "kvs_ebb-7.0",
          spawned: false,
          cards,
          probe: { status: "none", seen: `${o.rank}@3` },
        });
      }
      expect(job.finalized.size).toBe(3);
    }, 30_000);
  }
});
