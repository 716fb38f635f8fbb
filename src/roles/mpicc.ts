/**
 * `ebb mpicc|mpicxx|mpif90 ARGS`: the system's MPI compiler wrapper with libebb (src/c/ebb) added:
 * its include directory (ebb.h; ebb.mod for Fortran) before ARGS and, when ARGS link, the static
 * library after them. libebb is compiled with the system's mpicc at first need (mpif90 for the
 * Fortran module) and cached by a hash of its sources and of the compiler's `-show`, as the
 * agent's CFG library is (c-build.ts). A static library, so ranks need nothing of ebb's at run time.
 */
import { writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import header from "../c/ebb/ebb.h" with { type: "text" };
import source from "../c/ebb/ebb.c" with { type: "text" };
import fortran from "../c/ebb/ebb.f90" with { type: "text" };
import { PROTOCOL_VERSION } from "../proto/version.ts";
import { cachedDir, compile, compilerIdentity } from "./c-build.ts";

export const MPI_COMPILERS = ["mpicc", "mpicxx", "mpif90"] as const;
export type MpiCompiler = (typeof MPI_COMPILERS)[number];

/** Where `ebb mpicc` keeps its builds: $EBB_CACHE_DIR, else $XDG_CACHE_HOME/ebb, else ~/.cache/ebb. */
export function cacheDir(env: Record<string, string | undefined> = process.env): string {
  return env.EBB_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "ebb");
}

/** The system compiler a wrapper runs: $EBB_MPICC (mpicxx: $EBB_MPICXX, mpif90: $EBB_MPIF90), else the name on PATH. */
function systemCompiler(name: MpiCompiler, env: Record<string, string | undefined>): string {
  const path = env[`EBB_${name.toUpperCase()}`] || Bun.which(name);
  if (!path) throw new Error(`${name} not found (PATH=${env.PATH ?? ""}); install MPI's compiler wrappers or name one with EBB_${name.toUpperCase()}`);
  return path;
}

/** libebb built with `mpicc`: the directory holding include/ebb.h and libebb.a. */
async function cLibrary(mpicc: string, cache: string): Promise<string> {
  const show = await compilerIdentity(mpicc);
  return cachedDir(cache, "libebb", `${PROTOCOL_VERSION}\0${header}\0${source}\0${show}`, async (tmp) => {
    writeFileSync(join(tmp, "ebb.h"), header);
    writeFileSync(join(tmp, "ebb.c"), source);
    await compile([mpicc, "-O2", "-fPIC", `-DEBB_PROTOCOL=${PROTOCOL_VERSION}`, "-c", "ebb.c", "-o", "ebb.o"], tmp);
    await compile(["ar", "rcs", "libebb.a", "ebb.o"], tmp);
  });
}

/** The Fortran module built with `mpif90`: the directory holding ebb.mod and libebbf.a. */
async function fortranModule(mpif90: string, cache: string): Promise<string> {
  const show = await compilerIdentity(mpif90);
  return cachedDir(cache, "libebbf", `${fortran}\0${show}`, async (tmp) => {
    writeFileSync(join(tmp, "ebb.f90"), fortran);
    await compile([mpif90, "-O2", "-fPIC", "-c", "ebb.f90", "-o", "ebbf.o"], tmp);
    await compile(["ar", "rcs", "libebbf.a", "ebbf.o"], tmp);
  });
}

/** Flags that stop a compiler before it links: then the libraries are not added. */
const NO_LINK = new Set(["-c", "-S", "-E", "-M", "-MM", "-show", "-showme", "-compile_info", "-link_info", "--version", "-v"]);

/** The command line to run: the system compiler, libebb's include directory, ARGS, and libebb when ARGS link. */
export async function compilerCommand(name: MpiCompiler, args: readonly string[], env: Record<string, string | undefined> = process.env): Promise<string[]> {
  const cache = cacheDir(env);
  const compiler = systemCompiler(name, env);
  const c = await cLibrary(name === "mpicc" ? compiler : systemCompiler("mpicc", env), cache);
  const f = name === "mpif90" ? await fortranModule(compiler, cache) : undefined;
  const include = f ? [`-I${c}`, `-I${f}`] : [`-I${c}`];
  const links = !args.some((a) => NO_LINK.has(a));
  const libs = links ? [...(f ? [join(f, "libebbf.a")] : []), join(c, "libebb.a")] : [];
  return [compiler, ...include, ...args, ...libs];
}

/** Runs the compiler with the terminal's stdio; its exit code. */
export async function runCompiler(name: MpiCompiler, args: readonly string[]): Promise<number> {
  const argv = await compilerCommand(name, args);
  const p = Bun.spawn(argv, { stdio: ["inherit", "inherit", "inherit"] });
  return p.exited;
}
