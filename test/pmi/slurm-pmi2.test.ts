import { describe, expect, test } from "bun:test";
import type { SpawnRequest } from "../../src/pmi/backend.ts";
import { compileC } from "../support/mpi.ts";
import { HANG_GUARD, SingleNodeJob, launchRanks } from "../support/pmi-job.ts";

/**
 * The PMI-2 wire against a real, independent PMI-2 client: Slurm's libpmi2 (Debian libpmi2-0-dev),
 * which descends from MPICH's simple PMI-2 client. Debian's MPICH 4.0.2 itself is built with PMI-1
 * only (see mpich.test.ts). Hello + allreduce over the KVS, job attributes, node attributes with
 * wait, the name service and spawn, all through PMI_FD.
 */

const SOURCE = `
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(call, code) do { int rc_ = (call); if (rc_ != PMI2_SUCCESS) { fprintf(stderr, "%s failed: %d\\n", #call, rc_); return code; } } while (0)
int main(int argc, char **argv) {
  int spawned, size, rank, appnum, found, len, sum = 0;
  char jobid[256], key[64], val[1024], map[1024], usize[64], attr[256], port[256];
  CHECK(PMI2_Init(&spawned, &size, &rank, &appnum), 10);
  CHECK(PMI2_Job_GetId(jobid, sizeof jobid), 11);
  CHECK(PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof map, &found), 12);
  if (!found) return 13;
  CHECK(PMI2_Info_GetJobAttr("universeSize", usize, sizeof usize, &found), 14);
  snprintf(key, sizeof key, "val-%d", rank);
  snprintf(val, sizeof val, "%d;semi colon", rank + 1);
  CHECK(PMI2_KVS_Put(key, val), 15);
  if (rank == 0) {
    CHECK(PMI2_Info_PutNodeAttr("shm-segment", "seg;0"), 16);
    CHECK(PMI2_Nameserv_publish("ocean", NULL, "tag#0$port#4242"), 17);
  }
  CHECK(PMI2_KVS_Fence(), 18);
  for (int r = 0; r < size; r++) {
    snprintf(key, sizeof key, "val-%d", r);
    CHECK(PMI2_KVS_Get(jobid, r, key, val, sizeof val, &len), 19);
    if (strcmp(strchr(val, ';'), ";semi colon") != 0) return 20;
    sum += atoi(val);
  }
  CHECK(PMI2_Info_GetNodeAttr("shm-segment", attr, sizeof attr, &found, 1), 21);
  CHECK(PMI2_Nameserv_lookup("ocean", NULL, port, sizeof port), 22);
  if (rank == 0 && argc > 1) {
    const char *cmds[1] = { "./worker" };
    const char *args[2] = { "--alpha", "b c" };
    const char **argvs[1] = { args };
    int argcs[1] = { 2 }, maxprocs[1] = { 3 }, infosizes[1] = { 1 }, errors[3] = { -1, -1, -1 };
    MPID_Info wdir = { 0, 0, 0, NULL, "wdir", "/tmp" };
    const MPID_Info *infos[1] = { &wdir };
    MPID_Info parent = { 0, 0, 0, NULL, "PARENT_ROOT_PORT_NAME", "tag#1$port#99" };
    const MPID_Info *preput[1] = { &parent };
    char child[256] = "";
    CHECK(PMI2_Job_Spawn(1, cmds, argcs, argvs, maxprocs, infosizes, infos, 1, preput, child, sizeof child, errors), 23);
    printf("spawned jobid=%s errors=%d,%d,%d\\n", child, errors[0], errors[1], errors[2]);
  }
  CHECK(PMI2_KVS_Fence(), 24);
  if (rank == 0) CHECK(PMI2_Nameserv_unpublish("ocean", NULL), 25);
  printf("pmi2 rank=%d size=%d sum=%d jobid=%s map=%s usize=%s attr=%s port=%s spawned=%d\\n",
         rank, size, sum, jobid, map, usize, attr, port, spawned);
  CHECK(PMI2_Finalize(), 26);
  return 0;
}
`;

const LIB = "/usr/lib/x86_64-linux-gnu/libpmi2.so";
const bin = await compileC("slurm_pmi2", SOURCE, { cc: "cc", flags: ["-lpmi2"], requires: LIB });

describe.skipIf(!bin)("Slurm libpmi2 (a real PMI-2 client) over PMI_FD", () => {
  for (const n of [1, 2, 4]) {
    test(`${n} rank(s): KVS allreduce, job and node attributes, name service`, async () => {
      const names = new Map<string, string>();
      const job = new SingleNodeJob(n, { names });
      const out = await launchRanks(bin as string, job, { mode: "pmi2" });
      for (const o of out) {
        expect({ code: o.code, stderr: o.stderr }).toEqual({ code: 0, stderr: "" });
        expect(o.stdout).toBe(
          `pmi2 rank=${o.rank} size=${n} sum=${(n * (n + 1)) / 2} jobid=ebb-7.0 map=(vector,(0,1,${n})) usize=${n} attr=seg;0 port=tag#0$port#4242 spawned=0\n`,
        );
        expect(o.version).toBe(2);
      }
      expect(names.size).toBe(0);
      expect(job.protocolErrors).toEqual([]);
      expect(job.finalized.size).toBe(n);
    }, HANG_GUARD);
  }

  test("over PMI_PORT + PMI_ID (fullinit carries srcid), and a spawned rank sees spawner-jobid", async () => {
    const job = new SingleNodeJob(2, { spawned: true });
    const out = await launchRanks(bin as string, job, { via: "port" });
    for (const o of out) {
      expect({ code: o.code, stderr: o.stderr }).toEqual({ code: 0, stderr: "" });
      expect(o.stdout).toBe(
        `pmi2 rank=${o.rank} size=2 sum=3 jobid=ebb-7.0 map=(vector,(0,1,2)) usize=2 attr=seg;0 port=tag#0$port#4242 spawned=1\n`,
      );
    }
  }, HANG_GUARD);

  test("spawn reaches the backend with commands, args, info and preput", async () => {
    const requests: Array<{ rank: number; req: SpawnRequest }> = [];
    const job = new SingleNodeJob(2, {
      spawn: async (rank, req) => {
        requests.push({ rank, req });
        return { rc: 0, jobId: "ebb-7.1", errcodes: [0, 0, 0] };
      },
    });
    const out = await launchRanks(bin as string, job, { args: ["spawn"], mode: "pmi2" });
    expect(out.map((o) => o.code)).toEqual([0, 0]);
    expect(out[0]?.stdout.split("\n")[0]).toBe("spawned jobid=ebb-7.1 errors=0,0,0");
    expect(requests).toEqual([
      {
        rank: 0,
        req: {
          commands: [{ execname: "./worker", args: ["--alpha", "b c"], maxprocs: 3, info: { wdir: "/tmp" } }],
          preput: { PARENT_ROOT_PORT_NAME: "tag#1$port#99" },
        },
      },
    ]);
  }, HANG_GUARD);
});
