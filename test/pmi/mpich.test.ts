import { describe, expect, test } from "bun:test";
import { compileMpi } from "../support/mpi.ts";
import { HANG_GUARD, SingleNodeJob, launchRanks } from "../support/pmi-job.ts";

/** Real MPICH (libmpi) ranks against PmiConnection + NodeStepPmi, no agent. */

const HELLO = `
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, sum = 0, usize = 0, flag = 0, *attr;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag);
  if (flag) usize = *attr;
  printf("hello rank=%d size=%d sum=%d universe=%d\\n", rank, size, sum, usize);
  MPI_Finalize();
  return 0;
}
`;

const VERSION = `
#include <mpi.h>
#include <stdio.h>
int main(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(v, &len);
  printf("%s\\n", v);
  return 0;
}
`;

const NAMES = `
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, rc;
  char port[MPI_MAX_PORT_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 0) printf("publish=%d\\n", MPI_Publish_name("ocean", MPI_INFO_NULL, "tag#0$description#node-3$"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    rc = MPI_Lookup_name("ocean", MPI_INFO_NULL, port);
    printf("lookup=%d port=%s\\n", rc, rc == MPI_SUCCESS ? port : "-");
    printf("duplicate=%d\\n", MPI_Publish_name("ocean", MPI_INFO_NULL, "other") != MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("unpublish=%d\\n", MPI_Unpublish_name("ocean", MPI_INFO_NULL, "tag#0$description#node-3$"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) printf("missing=%d\\n", MPI_Lookup_name("ocean", MPI_INFO_NULL, port) != MPI_SUCCESS);
  MPI_Finalize();
  return 0;
}
`;

const hello = await compileMpi("hello_allreduce", HELLO);
const names = await compileMpi("name_service", NAMES);
const versionBin = await compileMpi("mpi_version", VERSION);

/** MPICH's version as [major, minor], from the library itself. */
async function mpichVersion(): Promise<[number, number]> {
  const proc = Bun.spawn([versionBin as string], { stdout: "pipe" });
  const text = await new Response(proc.stdout).text();
  const m = /MPICH Version:\s*(\d+)\.(\d+)/.exec(text);
  if (!m) throw new Error(`not MPICH? ${text.slice(0, 200)}`);
  return [Number(m[1]), Number(m[2])];
}

function expectHello(outcomes: Awaited<ReturnType<typeof launchRanks>>, n: number) {
  for (const o of outcomes) {
    expect({ rank: o.rank, code: o.code, stderr: o.stderr }).toEqual({ rank: o.rank, code: 0, stderr: "" });
    expect(o.stdout).toBe(`hello rank=${o.rank} size=${n} sum=${(n * (n + 1)) / 2} universe=${n}\n`);
  }
}

describe.skipIf(!hello)("MPICH hello + MPI_Allreduce over PMI_FD", () => {
  for (const n of [1, 2, 4]) {
    test(`${n} rank(s)`, async () => {
      const job = new SingleNodeJob(n);
      const out = await launchRanks(hello as string, job);
      expectHello(out, n);
      expect(out.map((o) => o.version)).toEqual(new Array(n).fill(1));
      expect(job.protocolErrors).toEqual([]);
      expect([...job.finalized].sort()).toEqual(Array.from({ length: n }, (_, i) => i));
    }, HANG_GUARD);
  }
});

describe.skipIf(!hello)("MPICH over PMI_PORT + PMI_ID (no PMI_RANK/PMI_SIZE: initack supplies them)", () => {
  test("2 ranks", async () => {
    const job = new SingleNodeJob(2);
    const out = await launchRanks(hello as string, job, { via: "port" });
    expectHello(out, 2);
    expect(job.finalized.size).toBe(2);
  }, HANG_GUARD);
});

describe.skipIf(!hello)("MPICH with MPIR_CVAR_PMI_VERSION=2", () => {
  // MPICH >= 4.1 picks PMI-2 at run time from this variable. MPICH 4.0.x (Debian bookworm) has no
  // such variable: its PMI client is chosen when MPICH is built, and Debian builds PMI-1 ("simple").
  // The program must work either way; the version the rank negotiated tells which path ran.
  for (const n of [1, 2, 4]) {
    test(`${n} rank(s)`, async () => {
      const [major, minor] = await mpichVersion();
      const expected = major > 4 || (major === 4 && minor >= 1) ? 2 : 1;
      const job = new SingleNodeJob(n);
      const out = await launchRanks(hello as string, job, { env: { MPIR_CVAR_PMI_VERSION: "2" } });
      expectHello(out, n);
      expect(out.map((o) => o.version)).toEqual(new Array(n).fill(expected));
    }, HANG_GUARD);
  }
});

describe.skipIf(!names)("MPICH name service (MPI_Publish_name / MPI_Lookup_name) over PMI-1", () => {
  test("publish, lookup, duplicate, unpublish, lookup of a missing name", async () => {
    const registry = new Map<string, string>();
    const job = new SingleNodeJob(2, { names: registry });
    const out = await launchRanks(names as string, job);
    expect(out.map((o) => [o.code, o.stderr])).toEqual([
      [0, ""],
      [0, ""],
    ]);
    expect(out[0]?.stdout).toBe("publish=0\nunpublish=0\n");
    expect(out[1]?.stdout).toBe("lookup=0 port=tag#0$description#node-3$\nduplicate=1\nmissing=1\n");
    expect(registry.size).toBe(0);
  }, HANG_GUARD);
});
