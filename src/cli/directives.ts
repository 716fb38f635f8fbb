/**
 * Flags in a batch script's comments: `#EBB` lines, or, in a script that has none, `#SBATCH`
 * lines (a Slurm script runs as it is). They are read until the first line that is neither blank
 * nor a comment. `#EBB` lines are as strict as the command line, and their errors name the line;
 * `#SBATCH` flags that ebb does not have are left out and listed once if they change nothing
 * here, and refused with the reason if they would (scriptFlags).
 */
import { parse, type ArgsDef, type Parsed } from "./command.ts";
import { longFlag, SBATCH_LONG_FLAGS, SBATCH_ONLY, slurmFlag } from "./slurm-flags.ts";
import { UsageError } from "./errors.ts";

export interface Directive {
  line: number;
  words: string[];
}

/** The `#EBB` and `#SBATCH` lines at the top of a script. */
export function directives(script: string): { ebb: Directive[]; sbatch: Directive[] } {
  const ebb: Directive[] = [];
  const sbatch: Directive[] = [];
  const lines = script.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (i === 0 && line.startsWith("#!")) continue;
    if (line === "") continue;
    if (!line.startsWith("#")) break;
    const m = /^#(EBB|SBATCH)(?:\s+(.*))?$/.exec(line);
    if (m) (m[1] === "EBB" ? ebb : sbatch).push({ line: i + 1, words: shellWords((m[2] ?? "").replace(/\s+#.*$/, "")) });
  }
  return { ebb, sbatch };
}

/**
 * The flags a script's directives set (later lines win over earlier ones), and for #SBATCH the
 * flags left out. `source` names the script in errors. #SBATCH lines are read as sbatch reads
 * them (getopt: a long flag may be cut to a prefix only it has); a flag sbatch has and ebb does not
 * is left out with a warning when it changes nothing here, and refused with the reason when it
 * would (slurm-flags.ts), as is a flag sbatch does not have.
 */
export function scriptFlags<A extends ArgsDef>(script: string, args: A, source: string): { flags: Partial<Parsed<A>>; ignored: string[]; kind?: "EBB" | "SBATCH" } {
  const { ebb, sbatch } = directives(script);
  const kind = ebb.length > 0 ? "EBB" : sbatch.length > 0 ? "SBATCH" : undefined;
  const flags: Record<string, unknown> = {};
  const ignored: string[] = [];
  const ebbNames = Object.entries(args).flatMap(([n, d]) => (d.type === "positional" ? [] : [n, ...(d.alias === undefined ? [] : typeof d.alias === "string" ? [d.alias] : d.alias)]));
  for (const d of kind === "EBB" ? ebb : sbatch) {
    const refuse = (message: string) => new UsageError(`${source} line ${d.line}: #${kind} ${d.words.join(" ")}: ${message}`);
    // A heterogeneous job's separator (packjob before Slurm 20.02).
    if (kind === "SBATCH" && /^(hetjob|packjob)$/.test(d.words[0] ?? "")) throw refuse("ebb has no heterogeneous jobs; submit each component as a job of its own (--dependency=after:ID starts one once the other has started)");
    let parsed: Parsed<A> & { help?: true };
    try {
      const words = kind === "SBATCH" ? d.words.map((w) => getoptName(w, ebbNames)).filter((w) => !sharedByUser(w, `line ${d.line}`, ignored)) : d.words;
      parsed = parse("submit", args, words, { onUnknown: kind === "SBATCH" ? sbatchOnlyFlag(ignored, `line ${d.line}`) : undefined });
    } catch (e) {
      if (e instanceof UsageError) throw refuse(e.message.replace(/ \(ebb submit --help (lists the flags|says what it takes)\)$/, ""));
      throw e;
    }
    if (parsed.help || parsed._.length > 0) throw refuse("only flags belong in #" + kind + " lines");
    for (const [k, v] of Object.entries(parsed)) if (k !== "_" && v !== undefined && !(Array.isArray(v) && v.length === 0)) flags[k] = v;
  }
  return { flags: flags as Partial<Parsed<A>>, ignored, kind };
}

/** Whether a Slurm script's own lines ask sbatch to print the job id alone (`#SBATCH --parsable`), as sbatch honours them. */
export const sbatchParsable = (script: string): boolean => {
  const { ebb, sbatch } = directives(script);
  return ebb.length === 0 && sbatch.some((d) => d.words.includes("--parsable"));
};

/**
 * A flag sbatch has and ebb does not (met by parse's onUnknown, in #SBATCH lines and on `ebb
 * sbatch`'s command line): passed quietly when ebb does it anyway, listed in `ignored` (with
 * `where`) when it changes nothing here, refused with the reason when it would; a flag sbatch does
 * not have either is refused.
 */
export function sbatchOnlyFlag(ignored: string[], where: string): (flag: string, rest: readonly string[]) => number {
  return (flag, rest) => {
    const f = slurmFlag(flag, rest, SBATCH_ONLY);
    if (!f.entry) throw new UsageError(`unknown flag ${flag.replace(/=.*$/, "")}: neither sbatch nor ebb has it`);
    if (f.entry.same !== undefined || (f.value !== undefined && f.entry.when?.(f.value))) return f.took;
    if (f.entry.refuse) throw new UsageError(`${f.shown}: ${f.entry.refuse}`);
    ignored.push(`${f.shown} (${where}: ${f.entry.ignore})`);
    return f.took;
  };
}

/**
 * sbatch's --exclusive=user (nodes shared with the user's own jobs only): left out, and listed with
 * why; --exclusive=mcs refused. Plain --exclusive (whole nodes) is ebb's own.
 */
export function sharedByUser(word: string, where: string, ignored: string[]): boolean {
  const m = /^--exclusive=(.*)$/.exec(word);
  if (!m) return false;
  if (m[1] === "user") {
    ignored.push(`${word} (${where}: ebb does not keep other users' jobs off a job's nodes, it confines each job to its own cores, memory and GPUs; --exclusive gives whole nodes)`);
    return true;
  }
  throw new UsageError(`${word}: ebb has no MCS labels; --exclusive gives whole nodes`);
}

/** `--na=2` as sbatch's getopt reads it: the one flag of sbatch's (or ebb's) that `na` begins, here --nodes=2. */
function getoptName(word: string, ebbNames: readonly string[]): string {
  if (!word.startsWith("--") || word === "--") return word;
  const eq = word.indexOf("=");
  const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
  if (ebbNames.includes(name) || (name.startsWith("no-") && ebbNames.includes(name.slice(3)))) return word;
  const full = longFlag(name, [...new Set([...SBATCH_LONG_FLAGS, ...ebbNames.filter((n) => n.length > 1)])]);
  if (typeof full !== "string") throw new UsageError(full.error);
  return `--${full}${eq < 0 ? "" : word.slice(eq)}`;
}

/** Splits on whitespace, honouring single and double quotes and backslashes. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let cur = "";
  let quote: string | undefined;
  let has = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === "\\" && i + 1 < text.length) {
      cur += text[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) words.push(cur);
      cur = "";
      has = false;
    } else {
      cur += c;
      has = true;
    }
  }
  if (has || cur) words.push(cur);
  return words;
}
