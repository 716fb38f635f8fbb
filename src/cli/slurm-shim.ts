/**
 * A Slurm command inside an ebb job (on every job process's PATH) that is one of ebb's with the
 * Slurm command's flags: `map` turns them into the ebb command's, or refuses them (a UsageError,
 * printed as Slurm prints its errors, exit 1).
 */
import { defineCommand, runCommand } from "./command.ts";
import { loadCommand } from "./commands.ts";
import { UsageError } from "./errors.ts";
import { err } from "../util/stdio.ts";
import { VERSION } from "../util/version.ts";

export function slurmShim(o: { name: string; description: string; target: string; map(argv: readonly string[]): string[] }) {
  return defineCommand({
    meta: { name: o.name, description: o.description, hidden: true },
    args: { words: { type: "positional", variadic: true, description: `${o.name}'s flags` } },
    stopAtPositional: true,
    ownParser: true,
    ownShortHelp: true,
    run: async ({ raw }) => {
      let argv: string[];
      try {
        argv = o.map(raw);
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        err(`${o.name}: error: ${e.message}\n`);
        process.exit(1);
      }
      await runCommand(await loadCommand(o.target), argv, VERSION);
    },
  });
}
