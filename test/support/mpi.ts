import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Compile C test programs at test time. When the compiler (or a library) is missing the test is
 * skipped with a message, except under CI=true, where a missing toolchain is a failure.
 */

const built = new Map<string, Promise<string | undefined>>();

/** One cache directory; binaries are named by a hash of what built them, so runs never collide or pile up. */
function workDir(): string {
  const dir = join(tmpdir(), `ebb-pmi-test-${process.getuid?.() ?? "user"}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function unavailable(what: string): undefined {
  if (process.env.CI === "true") throw new Error(`${what} (required because CI=true)`);
  console.warn(`skipping: ${what}`);
  return undefined;
}

export interface CompileOptions {
  /** Default `mpicc`. */
  cc?: string;
  flags?: string[];
  /** A library that must exist for the test to make sense, e.g. `/usr/lib/x86_64-linux-gnu/libpmi2.so`. */
  requires?: string;
  /** Optional extras are skipped even under CI. */
  optional?: boolean;
}

/** Path of the compiled binary, or undefined (test skipped) if the toolchain is missing. */
export function compileC(name: string, source: string, opts: CompileOptions = {}): Promise<string | undefined> {
  const cc = opts.cc ?? "mpicc";
  const key = `${cc}:${name}:${source}`;
  let p = built.get(key);
  if (!p) {
    p = build(name, source, cc, opts);
    built.set(key, p);
  }
  return p;
}

async function build(name: string, source: string, cc: string, opts: CompileOptions): Promise<string | undefined> {
  const miss = (what: string) => (opts.optional ? (console.warn(`skipping: ${what}`), undefined) : unavailable(what));
  if (!Bun.which(cc)) return miss(`${cc} not found`);
  if (opts.requires && !(await Bun.file(opts.requires).exists())) return miss(`${opts.requires} not found`);
  const flags = opts.flags ?? [];
  const bin = join(workDir(), `${name}-${Bun.hash([cc, ...flags, source].join("\0")).toString(16)}`);
  if (existsSync(bin)) return bin;
  const tmp = `${bin}.${process.pid}`;
  writeFileSync(`${tmp}.c`, source);
  const proc = Bun.spawn([cc, "-O0", "-o", tmp, `${tmp}.c`, ...flags], { stdout: "pipe", stderr: "pipe" });
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  rmSync(`${tmp}.c`, { force: true });
  if (code !== 0) throw new Error(`${cc} failed for ${name}:\n${err}`);
  renameSync(tmp, bin);
  return bin;
}

/** An MPI program built with mpicc. */
export const compileMpi = (name: string, source: string): Promise<string | undefined> => compileC(name, source);
