/** How to run this same ebb again: the compiled binary, or bun with src/main.ts. */
import { fileURLToPath } from "node:url";

export function isCompiled(): boolean {
  return Bun.main.startsWith("/$bunfs/") || import.meta.url.includes("$bunfs");
}

/** argv prefix that starts ebb (append a subcommand and its flags). */
export function ebbCommand(): string[] {
  if (isCompiled()) return [process.execPath];
  return [process.execPath, fileURLToPath(new URL("../main.ts", import.meta.url))];
}
