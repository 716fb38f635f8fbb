/**
 * `ebb mpicc|mpicxx|mpif90` (roles/mpicc.ts) and libebb outside an elastic step: programs in C,
 * C++ and Fortran built against ebb.h / the ebb module run under MPICH's mpiexec, where nothing is
 * ever pending; the library is built once and cached; its refusals say what is wrong.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runProcess } from "../support/cluster.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";

const work = mkdtempSync(join(tmpdir(), "ebb-mpicc-"));
const env = { ...(process.env as Record<string, string>), EBB_CACHE_DIR: join(work, "cache") };
const have = Bun.which("mpicc") !== null && Bun.which("mpiexec") !== null;
const program = (name: string) => join(ROOT, "test/mpi/programs", name);
const ebb = (args: string[], more: Record<string, string> = {}) => runProcess([process.execPath, join(ROOT, "src/main.ts"), ...args], { env: { ...env, ...more }, cwd: work });
const mpiexec = (n: number, argv: string[], more: Record<string, string> = {}) => runProcess(["mpiexec", "-n", String(n), ...argv], { env: { ...env, ...more }, cwd: work });

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(!have)("ebb mpicc and friends", () => {
  test("C: builds against ebb.h; -c compiles without the library; libebb is built once and cached", async () => {
    const obj = await ebb(["mpicc", "-c", "-o", join(work, "api.o"), program("ebb-api.c")]);
    expect(obj.stderr).toBe("");
    expect(obj.code).toBe(0);
    const r = await ebb(["mpicc", "-O2", "-o", join(work, "api"), program("ebb-api.c")]);
    expect(r.code).toBe(0);
    expect(readdirSync(join(work, "cache")).filter((d) => d.startsWith("libebb-"))).toHaveLength(1);
    const run = await mpiexec(2, [join(work, "api")]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("name rc=-1 ebb_register: a name of letters");
    expect(run.stdout).toContain("grid rc=-1 ebb_register(m): 2-D block-cyclic needs positive mb, nb and a pr x pc grid of all 2 ranks");
    expect(run.stdout).toContain("good rc=0 ok");
    expect(run.stdout).toContain("adapt rc=-2 no adaptation is pending: call ebb_adapt() when ebb_probe_adapt() returns 1");
    expect(run.stdout).toContain("restored rc=-1 the checkpoint has no array v");
    expect(run.stdout).toContain("grid12 3x4");
  }, 120_000);

  test('C++: ebb mpicxx, ebb.h\'s extern "C"', async () => {
    const r = await ebb(["mpicxx", "-o", join(work, "cxx"), program("ebb-cxx.cpp")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const run = await mpiexec(2, [join(work, "cxx")]);
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n").filter((l) => l.startsWith("c++")).sort()).toEqual(["c++ rank=0 size=2 register=0 pending=0", "c++ rank=1 size=2 register=0 pending=0"]);
  }, 120_000);

  test("Fortran: ebb mpif90 and `use ebb`, with periodic checkpoints (EBB_CHECKPOINT_EVERY=2) removed when the job ends", async () => {
    const r = await ebb(["mpif90", "-o", join(work, "ftn"), program("ebb-fortran.f90")]);
    expect(r.code).toBe(0);
    const run = await mpiexec(2, [join(work, "ftn")], { EBB_CHECKPOINT_EVERY: "2", EBB_CKPT_DIR: join(work, "ckpt") });
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n").filter((l) => l.startsWith("fortran")).sort()).toEqual(["fortran rank=0 size=2 resumed=0 ierr=0", "fortran rank=1 size=2 resumed=0 ierr=0"]);
    expect(readdirSync(work)).not.toContain("ckpt");
  }, 120_000);

  test("a rank whose agent speaks another adaptation protocol: ebb_init refuses, naming both and what to do", async () => {
    const r = await mpiexec(1, [join(work, "api")], { EBB_ADAPT_SHM: "/dev/null", EBB_ADAPT_PROTOCOL: String(PROTOCOL_VERSION + 1) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`the agent speaks adaptation protocol ${PROTOCOL_VERSION + 1}, this program's libebb protocol ${PROTOCOL_VERSION}: rebuild the program with the agent's newer ebb (ebb mpicc)`);
  }, 60_000);

  test("no compiler: one line saying where it looked and what to set", async () => {
    const r = await ebb(["mpicc", "x.c"], { EBB_MPICC: "", PATH: "/nonexistent" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ebb mpicc: mpicc not found \(PATH=\/nonexistent\); install MPI's compiler wrappers or name one with EBB_MPICC\n$/);
  });
});
