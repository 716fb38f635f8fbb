/**
 * `ebb exec`: a TypeScript or JavaScript program run in this process as `bun FILE ARGS` runs it,
 * with `ebb/comm` and `ebb/epop` resolved to this ebb's own copies. The compiled binary carries
 * them, so a node with nothing but the binary runs ebb's elastic programs, and a rank always
 * speaks the wire of the agent that started it. Every other import resolves as usual, from the
 * program's directory up (its own node_modules).
 *
 * The mapping is a runtime plugin's virtual modules (Bun.plugin, build.module): the names are
 * answered before any node_modules lookup, so a checkout's or a package's copy of ebb next to
 * the program is not the one loaded. Each module is loaded at its first import only (a grow
 * starts its joining ranks all at once: a program without EPOP phases does not load ebb/epop).
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { jitPolicy, NORMAL } from "../util/jit.ts";

const EMBEDDED: Record<string, () => Promise<object>> = {
  "ebb/comm": () => import("../comm/index.ts"),
  "ebb/epop": () => import("../epop/index.ts"),
};

export const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

let registered = false;

/** Maps `ebb/comm` and `ebb/epop` to this ebb's copies (once); a warm rank does it before any claim: nothing in it is a job's. */
export function registerEmbedded(): void {
  if (registered) return;
  registered = true;
  Bun.plugin({
    name: "ebb embedded modules",
    setup(build) {
      for (const [name, load] of Object.entries(EMBEDDED)) build.module(name, async () => ({ exports: (await load()) as Record<string, unknown>, loader: "object" }));
    },
  });
}

/**
 * Loads `file` as the main program with `args` as its arguments (process.argv is
 * [runtime, FILE, ...ARGS], as under bun). Resolves once its top level has run; the program goes
 * on in the event loop. Its uncaught errors are the caller's (they end the process as under bun).
 */
export async function runProgram(file: string, args: string[]): Promise<void> {
  const path = resolve(file);
  registerEmbedded();
  process.argv = [process.argv[0]!, path, ...args];
  // The program's own hot loops deserve the JIT's normal policy (ebb's commands start reluctant).
  jitPolicy(NORMAL);
  await import(pathToFileURL(path).href);
}
