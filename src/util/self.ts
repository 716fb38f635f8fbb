/** How to run this same ebb again: the compiled binary, or bun with src/main.ts. */
import { fileURLToPath } from "node:url";

export function isCompiled(): boolean {
  return Bun.main.startsWith("/$bunfs/") || import.meta.url.includes("$bunfs");
}

/**
 * argv prefix that starts ebb (append a subcommand and its flags). Never with a `.env` of the
 * working directory: a job's directory is not ebb's configuration (the compiled binary is built
 * not to read one either).
 */
export function ebbCommand(): string[] {
  if (isCompiled()) return [process.execPath];
  return [process.execPath, "--no-env-file", fileURLToPath(new URL("../main.ts", import.meta.url))];
}
