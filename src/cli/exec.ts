/**
 * `ebb exec FILE ARGS`: runs a TypeScript or JavaScript program with this ebb's runtime, `ebb/comm`
 * and `ebb/epop` resolved to the copies inside it (roles/program.ts). `--bun` takes bun's command
 * line instead: the `bun` that agents offer on nodes without one runs `ebb exec --bun -- ARGS`.
 */
import { defineCommand } from "./command.ts";
import { isFile, runProgram } from "../roles/program.ts";
import { err } from "../util/stdio.ts";

const USAGE = "usage: ebb exec [--bun] [--] FILE ARGS...";

/** `bun [run] FILE ARGS`: the program and its arguments; undefined for any other bun command line. */
export function programOfBunArgv(argv: string[]): { file: string; args: string[] } | undefined {
  const words = argv[0] === "run" ? argv.slice(1) : argv;
  const [file, ...args] = words;
  if (file === undefined || file.startsWith("-") || !isFile(file)) return undefined;
  return { file, args };
}

/** This binary as the bun CLI (BUN_BE_BUN; from source, bun itself), for bun's other commands; exits with its status. */
async function beBun(argv: string[]): Promise<never> {
  const proc = Bun.spawn([process.execPath, ...argv], { env: { ...process.env, BUN_BE_BUN: "1" }, stdio: ["inherit", "inherit", "inherit"] });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => proc.kill(signal));
  const code = await proc.exited;
  // Killed by a signal: ended by the same one, as a parent shell expects.
  const signal = proc.signalCode;
  if (typeof signal === "string") {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code);
}

function fail(message: string, code: number): never {
  err(`ebb exec: ${message}\n`);
  process.exit(code);
}

export default defineCommand({
  meta: {
    name: "exec",
    description:
      "Run a TypeScript or JavaScript program as `bun FILE ARGS` would, with ebb/comm and ebb/epop taken from this ebb (the compiled binary needs no bun and no node_modules for them; the program's other imports resolve from its own directory): ebb run -N 2 ebb exec app.ts",
  },
  args: {
    bun: { type: "boolean", description: "Take bun's command line: `[run] FILE ARGS` runs FILE as above, anything else runs this binary as the bun CLI (the `bun` command of nodes that have none)" },
    program: { type: "positional", variadic: true, description: "The program file and its arguments (flags after it are the program's)" },
  },
  stopAtPositional: true,
  run: async ({ args: a }) => {
    const argv = a._;
    let program: { file: string; args: string[] } | undefined;
    if (a.bun) {
      program = programOfBunArgv(argv);
      if (!program) return beBun(argv);
    } else {
      const [file, ...args] = argv;
      if (file === undefined) fail(`no program given; ${USAGE}`, 2);
      if (!isFile(file)) fail(`${file}: no such file`, 1);
      program = { file, args };
    }
    // The program's own errors are not ebb's: uncaught, they end the process as they would under bun.
    await runProgram(program.file, program.args);
  },
});
