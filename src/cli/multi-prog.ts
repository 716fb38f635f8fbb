/**
 * srun --multi-prog's configuration file (srun(1), MULTIPLE PROGRAM CONFIGURATION) as the shell
 * command every rank of the step runs: it execs the program of its line, found by SLURM_PROCID,
 * with `%t` (the rank) and `%o` (its offset among its line's ranks; under `*`, the rank) in the
 * arguments. Lines: ranks (`0,2-3`, or `*` for the others), the program, its arguments (quoted as
 * in a shell); `#` comments; a backslash at the end continues a line. Pure.
 */
import { shellWords } from "./directives.ts";
import { UsageError } from "./errors.ts";

interface Line {
  /** Rank ranges, inclusive; undefined for `*`. */
  ranges?: [number, number][];
  words: string[];
}

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** A word with %t and %o replaced by the shell's `rank` and `offset` expressions. */
const word = (w: string, rank: string, offset: string) =>
  w.split(/(%[to])/).map((part) => (part === "%t" ? rank : part === "%o" ? offset : part === "" ? "" : quote(part))).join("") || "''";

function parseLines(text: string, file: string): Line[] {
  const lines: Line[] = [];
  const raw = text.replace(/\\\n/g, " ").split("\n");
  raw.forEach((l, i) => {
    const t = l.trim();
    if (t === "" || t.startsWith("#")) return;
    const [ranks, ...words] = shellWords(t);
    if (words.length === 0) throw new UsageError(`${file} line ${i + 1}: no program after the ranks ${ranks}`);
    if (ranks === "*") return lines.push({ words });
    const ranges = ranks!.split(",").map((r): [number, number] => {
      const m = /^(\d+)(?:-(\d+))?$/.exec(r);
      const [a, b] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
      if (!(a <= b)) throw new UsageError(`${file} line ${i + 1}: "${ranks}" is not a list of ranks (0,2-3) or *`);
      return [a, b];
    });
    lines.push({ ranges, words });
  });
  return lines;
}

/** The `sh -c` script of `text`; with the step's task count, a rank no line names is refused here, as srun does. */
export function multiProgScript(text: string, file: string, ntasks?: number): string {
  const lines = parseLines(text, file);
  const any = lines.find((l) => l.ranges === undefined);
  if (ntasks !== undefined && !any)
    for (let r = 0; r < ntasks; r++)
      if (!lines.some((l) => l.ranges!.some(([a, b]) => a <= r && r <= b))) throw new UsageError(`Configuration file ${file} invalid, no record for task id ${r}`);
  const branches: string[] = [];
  for (const l of lines) {
    if (!l.ranges) continue;
    let before = 0;
    for (const [a, b] of l.ranges) {
      const offset = `"$((r - ${a - before}))"`;
      branches.push(`[ "$r" -ge ${a} ] && [ "$r" -le ${b} ]; then exec ${l.words.map((w) => word(w, '"$r"', offset)).join(" ")}`);
      before += b - a + 1;
    }
  }
  const rest = any ? `exec ${any.words.map((w) => word(w, '"$r"', '"$r"')).join(" ")}` : `echo ${quote(`srun: error: Configuration file ${file} invalid, no record for task id `)}"$r" >&2; exit 1`;
  return `r=$SLURM_PROCID\n${branches.map((b, i) => `${i === 0 ? "if" : "elif"} ${b}\n`).join("")}${branches.length > 0 ? `else ${rest}\nfi\n` : `${rest}\n`}`;
}
