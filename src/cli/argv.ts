/**
 * Launchers stop reading their own flags at the program name (`ebb run -N 2 ls -l`: -l is ls's),
 * as srun and mpiexec do. This splits raw arguments there, or at `--`.
 */
import type { ArgsDef } from "citty";

export function splitAtCommand(raw: readonly string[], defs: ArgsDef): { options: string[]; command: string[] } {
  const takesValue = new Set<string>();
  for (const [name, def] of Object.entries(defs)) {
    if (def.type !== "string" && def.type !== "enum") continue;
    takesValue.add(name);
    const aliases = "alias" in def ? def.alias : undefined;
    for (const a of aliases === undefined ? [] : Array.isArray(aliases) ? aliases : [aliases]) takesValue.add(a);
  }
  const options: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i]!;
    if (a === "--") return { options, command: raw.slice(i + 1) };
    if (!a.startsWith("-") || a === "-") return { options, command: raw.slice(i) };
    options.push(a);
    const name = a.replace(/^--?/, "");
    if (!a.includes("=") && takesValue.has(name) && i + 1 < raw.length) options.push(raw[++i]!);
  }
  return { options, command: [] };
}
