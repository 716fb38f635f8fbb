#!/usr/bin/env -S bun --no-env-file
/** ebb: one executable, one role per subcommand. */
import "./util/reexec-at-start.ts";
import { startupPolicy } from "./util/jit.ts";
import { VERSION } from "./util/version.ts";
import { COMMANDS, loadCommand } from "./cli/commands.ts";
import { closest, renderMainUsage, runCommand } from "./cli/command.ts";
import { err, out } from "./util/stdio.ts";

const DESCRIPTION = "A resource manager for elastic parallel jobs";

function mainUsage(): string {
  return renderMainUsage(
    DESCRIPTION,
    VERSION,
    Object.entries(COMMANDS)
      .filter(([, c]) => !c.hidden)
      .map(([n, c]) => [n, c.summary]),
  );
}

function usageError(message: string): never {
  err(`ebb: ${message}\n`);
  process.exit(2);
}

function commandName(word: string): string {
  if (word in COMMANDS) return word;
  const guess = closest(word, Object.keys(COMMANDS));
  usageError(`unknown command ${JSON.stringify(word)}${guess ? `; did you mean ${guess}?` : ""} (ebb help lists the commands)`);
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    err(mainUsage());
    usageError("no command given");
  }
  if (first === "--help" || first === "-h") return out(mainUsage());
  if (first === "--version" || first === "-V") return out(`${VERSION}\n`);
  if (first === "help") {
    if (rest.length > 1) usageError(`help takes one command, not ${rest.join(" ")}`);
    if (rest.length === 0) return out(mainUsage());
    return runCommand(await loadCommand(commandName(rest[0]!)), ["--help"], VERSION);
  }
  if (first.startsWith("-")) usageError(`unknown flag ${first} (ebb takes --help or --version before a command; ebb help lists the commands)`);
  await runCommand(await loadCommand(commandName(first)), rest, VERSION);
}

startupPolicy();
void main(process.argv.slice(2));
