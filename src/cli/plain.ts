/**
 * citty colours its help text unless NO_COLOR is "1", even when the text goes to a pipe or a file,
 * and reads the variable once, as it loads. Imported before citty: when stdout is not a terminal,
 * NO_COLOR is "1" while citty loads, and unset again right after (a microtask runs once every
 * module has loaded), so that no job ever inherits it.
 */
import { isTerminal } from "../util/stdio.ts";

if (!isTerminal(1) && process.env.NO_COLOR === undefined) {
  process.env.NO_COLOR = "1";
  queueMicrotask(() => delete process.env.NO_COLOR);
}
