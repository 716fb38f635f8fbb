/**
 * `ebb mpicc|mpicxx|mpif90 ARGS`: the MPI compiler wrapper with libebb added (roles/mpicc.ts).
 * Every argument is the compiler's; `--help` alone is ebb's.
 */
import { defineCommand, type CommandDef } from "./command.ts";
import { runCompiler, type MpiCompiler } from "../roles/mpicc.ts";
import { err } from "../util/stdio.ts";

const LANGUAGE: Record<MpiCompiler, string> = { mpicc: "C", mpicxx: "C++", mpif90: "Fortran (use ebb)" };

export function compilerCommand(name: MpiCompiler): CommandDef {
  return defineCommand({
    meta: {
      name,
      description: `Compile and link a ${LANGUAGE[name]} MPI program against ebb.h and libebb (malleable by checkpoint and restart): runs the system's ${name} with every argument as it is, libebb's include directory before them and the library after them (not with -c, -S, -E). libebb is built with the system's MPI at first need and cached in $EBB_CACHE_DIR (default ~/.cache/ebb); EBB_${name.toUpperCase()} names another ${name}. Example: ebb ${name} -O2 -o jacobi jacobi.c`,
    },
    args: {},
    ownParser: true,
    run: async ({ raw }) => {
      try {
        process.exitCode = await runCompiler(name, raw);
      } catch (e) {
        err(`ebb ${name}: ${(e as Error).message}\n`);
        process.exitCode = 1;
      }
    },
  });
}
