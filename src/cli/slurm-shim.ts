/**
 * A Slurm command inside an ebb job (on every job process's PATH) that is one of ebb's with the
 * Slurm command's flags: `map` turns them into the ebb command's, or refuses them (a UsageError,
 * printed as Slurm prints its errors, exit 1).
 */
import { defineCommand, runCommand } from "./command.ts";
import { loadCommand } from "./commands.ts";
import { UsageError } from "./errors.ts";
import { COMPACT } from "./job-format.ts";
import { err } from "../util/stdio.ts";
import { VERSION } from "../util/version.ts";

/** A Slurm command's word as its flag and the value written into it (`--name=v`, `-nv`), if any. */
export function splitFlag(word: string): { flag: string; inline: string | undefined } {
  const eq = word.startsWith("--") ? word.indexOf("=") : -1;
  if (eq > 0) return { flag: word.slice(0, eq), inline: word.slice(eq + 1) };
  if (!word.startsWith("--") && word.length > 2) return { flag: word.slice(0, 2), inline: word.slice(2) };
  return { flag: word, inline: undefined };
}

const FULL: Record<string, string> = Object.fromEntries(Object.entries(COMPACT).map(([full, short]) => [short, full]));
/** Slurm's states a job never is in under ebb, which ends a job at once and starts it when placed (squeue -t PD,R,CG). */
const NEVER = new Set(["CG", "COMPLETING", "CF", "CONFIGURING"]);
/** Slurm's states, short (R, PD, CD) or long, as ebb's long ones; those ebb never has left out beside others. */
export const longStates = (value: string): string => {
  const states = value.split(",");
  const kept = states.filter((s) => !NEVER.has(s.toUpperCase()));
  return (kept.length > 0 ? kept : states).map((s) => FULL[s.toUpperCase()] ?? s).join(",");
};

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
