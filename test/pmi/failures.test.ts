import { describe, expect, test } from "bun:test";
import { compileMpi } from "../support/mpi.ts";
import { HANG_GUARD, SingleNodeJob, launchRanks } from "../support/pmi-job.ts";

/** A failing rank fails its step with a message naming it; other steps served by the same process carry on. */

const ABORT = `
#include <mpi.h>
int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 7);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
`;

const HELLO = `
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank=%d sum=%d\\n", rank, sum);
  MPI_Finalize();
  return 0;
}
`;

const abortBin = await compileMpi("aborts", ABORT);
const helloBin = await compileMpi("hello_sum", HELLO);

describe.skipIf(!abortBin)("MPI_Abort", () => {
  test("reaches the backend with the exit code; the rank's connection is closed, the step fails", async () => {
    const job = new SingleNodeJob(2);
    const out = await launchRanks(abortBin as string, job);
    expect(job.aborts).toEqual([{ rank: 1, code: 7, message: "" }]);
    expect(job.failure).toBe("rank 1 aborted the job with exit code 7");
    // rank 0 waits in MPI_Barrier until the harness kills the step, as the agent would; rank 1
    // exits with 7 on its own unless the kill gets there first
    expect(out[0]?.signal).toBe("SIGKILL");
    expect(out[1]?.code === 7 || out[1]?.signal === "SIGKILL").toBe(true);
    expect(job.protocolErrors).toEqual([]);
  }, HANG_GUARD);
});

/** Rank 1 of the bad step is a shell that writes `payload` on its PMI fd; rank 0 is a real MPICH rank. */
function badStep(payload: string) {
  const job = new SingleNodeJob(2);
  const script = `if [ "$PMI_RANK" = 1 ]; then printf '%s' "$BAD_PAYLOAD" >&3; exec sleep 20; else exec "$HELLO_BIN"; fi`;
  const run = launchRanks("/bin/sh", job, {
    args: ["-c", script],
    env: { BAD_PAYLOAD: payload, HELLO_BIN: helloBin as string },
  });
  return { job, run };
}

describe.skipIf(!helloBin)("a rank sending garbage", () => {
  const cases: Array<[string, string, string]> = [
    ["an oversized line", `cmd=init pmi_version=1 pmi_subversion=1\n${"x".repeat(1500)}`, "line longer than 1024 bytes"],
    ["a line that is not PMI", "GET / HTTP/1.1\n", 'PMI-1 line does not start with cmd=: "GET / HTTP/1.1"'],
    ["a PMI-2 frame with a bad length", "cmd=init pmi_version=2 pmi_subversion=0\nabcdefcmd=fullinit;", 'bad PMI-2 length field "abcdef"'],
  ];
  for (const [name, payload, detail] of cases) {
    test(`${name}: its step fails naming rank 1, a neighbouring step completes`, async () => {
      const good = new SingleNodeJob(4);
      const goodRun = launchRanks(helloBin as string, good);
      const { job, run } = badStep(payload);
      const [goodOut, badOut] = await Promise.all([goodRun, run]);
      expect(job.protocolErrors).toEqual([`PMI protocol error from rank 1: ${detail}`]);
      expect(job.failure).toBe(`PMI protocol error from rank 1: ${detail}`);
      expect(badOut.map((o) => o.signal)).toEqual(["SIGKILL", "SIGKILL"]);
      expect(goodOut.map((o) => [o.code, o.stdout])).toEqual([0, 1, 2, 3].map((r) => [0, `rank=${r} sum=6\n`]));
      expect(good.failure).toBeUndefined();
    }, HANG_GUARD);
  }
});
