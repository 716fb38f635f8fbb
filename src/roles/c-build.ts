/**
 * Libraries ebb compiles with the machine's MPI compiler at first need: the agent's CFG
 * interposition library (agent/cfg-lib.ts) and libebb for `ebb mpicc` (mpicc.ts). Each build is
 * cached in a directory named by a hash of its sources and of `<compiler> -show` (a new source or
 * another MPI builds a new one); it is made under a temporary name and renamed into place, so a
 * build that fails or races another leaves nothing half-made.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/** Runs `argv` to its end: its exit code and its output (stdout and stderr together). */
export async function output(argv: string[], cwd?: string): Promise<{ code: number; text: string }> {
  const p = Bun.spawn(argv, { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, text: (out + err).trim() };
}

/** What `compiler -show` prints (the compiler and flags an MPI wrapper runs), part of every cache key. */
export async function compilerIdentity(compiler: string): Promise<string> {
  return (await output([compiler, "-show"])).text;
}

/**
 * The directory `<cacheDir>/<name>-<hash of key>`, made by `make(dir)` into a temporary directory
 * first unless it exists; `make` throws to fail the build (its message says why).
 */
export async function cachedDir(cacheDir: string, name: string, key: string, make: (dir: string) => Promise<void>): Promise<string> {
  const dir = join(cacheDir, `${name}-${Bun.hash(key).toString(16)}`);
  if (existsSync(dir)) return dir;
  mkdirSync(cacheDir, { recursive: true });
  // A name of its own per build: the agents of one `ebb up` are threads of one process, and a root
  // agent's cache (/run/ebb/cfg) is the host's; a name planted there fails the mkdir.
  const tmp = `${dir}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  mkdirSync(tmp);
  try {
    await make(tmp);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another process made it meanwhile: theirs is as good.
      if (!existsSync(dir)) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Runs a compiler command in `cwd`; throws with its output (the first 2,000 bytes) when it fails. */
export async function compile(argv: string[], cwd: string): Promise<void> {
  const r = await output(argv, cwd);
  if (r.code !== 0) throw new Error(`${argv.join(" ")} failed: ${r.text.slice(0, 2000)}`);
}
