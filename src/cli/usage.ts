/**
 * citty's usage text (--help, and after a usage error), with colour codes only on a terminal:
 * citty colours it whatever stdout is, unless NO_COLOR is set as it loads.
 */
import { renderUsage, type ArgsDef, type CommandDef } from "citty";
import { isTerminal, out } from "../util/stdio.ts";

const COLOUR = /\x1b\[[0-9;]*m/g;

export async function showUsage<T extends ArgsDef = ArgsDef>(cmd: CommandDef<T>, parent?: CommandDef<T>): Promise<void> {
  const text = await renderUsage(cmd, parent);
  out(`${isTerminal(1) ? text : text.replace(COLOUR, "")}\n\n`);
}
