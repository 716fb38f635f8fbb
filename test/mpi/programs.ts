/** The MPI test programs of test/mpi/programs, compiled at test time (skipped without mpicc unless CI=true). */
import { readFileSync } from "node:fs";
import { compileC, compileMpi } from "../support/mpi.ts";

const source = (name: string) => readFileSync(new URL(`./programs/${name}`, import.meta.url), "utf8");

export const program = (name: string) => new URL(`./programs/${name}`, import.meta.url).pathname;
export const mpi = (name: string) => compileMpi(`mpi-${name}`, source(`${name}.c`));
/** Slurm's libpmi2: a real PMI-2 client (Debian's MPICH 4.0.2 speaks only PMI-1). */
export const pmi2 = () => compileC("ebb-pmi2", source("pmi2.c"), { cc: "cc", flags: ["-lpmi2"], requires: "/usr/lib/x86_64-linux-gnu/libpmi2.so" });
