/**
 * Flags in a batch script's comments: `#EBB` lines, or, in a script that has none, `#SBATCH`
 * lines (a Slurm script runs as it is). They are read until the first line that is neither blank
 * nor a comment. `#EBB` lines are as strict as the command line, and their errors name the line;
 * `#SBATCH` flags that ebb does not have are left out, and listed once.
 */
import { parse, SLURM_ONLY, type ArgsDef, type Parsed } from "./command.ts";
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

/** Slurm flags without a value, so that an ignored one does not take the next word with it. */
const SLURM_BOOLEANS = new Set(["requeue", "no-requeue", "overcommit", "O", "oversubscribe", "s", "contiguous", "parsable", "quiet", "Q", "verbose", "v", "spread-job", "use-min-nodes", "ignore-pbs", "no-kill", "k", "reboot", "get-user-env"]);

/**
 * The flags a script's directives set (later lines win over earlier ones), and for #SBATCH the
 * flags left out. `source` names the script in errors.
 */
export function scriptFlags<A extends ArgsDef>(script: string, args: A, source: string): { flags: Partial<Parsed<A>>; ignored: string[]; kind?: "EBB" | "SBATCH" } {
  const { ebb, sbatch } = directives(script);
  const kind = ebb.length > 0 ? "EBB" : sbatch.length > 0 ? "SBATCH" : undefined;
  const flags: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const d of kind === "EBB" ? ebb : sbatch) {
    let parsed: Parsed<A> & { help?: true };
    try {
      parsed = parse("submit", args, d.words, {
        onUnknown:
          kind === "SBATCH"
            ? (flag, rest) => {
                const name = flag.replace(/^-+/, "").replace(/=.*$/, "");
                const takesNext = !flag.includes("=") && !SLURM_BOOLEANS.has(name) && rest[0] !== undefined && !rest[0].startsWith("-") && !(flag.length > 2 && !flag.startsWith("--"));
                ignored.push(`${takesNext ? `${flag} ${rest[0]}` : flag} (line ${d.line}${SLURM_ONLY[name] ? `: ${SLURM_ONLY[name]}` : ""})`);
                return takesNext ? 1 : 0;
              }
            : undefined,
      });
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${source} line ${d.line}: #${kind} ${d.words.join(" ")}: ${e.message.replace(/ \(ebb submit --help (lists the flags|says what it takes)\)$/, "")}`);
      throw e;
    }
    if (parsed.help || parsed._.length > 0) throw new UsageError(`${source} line ${d.line}: #${kind} ${d.words.join(" ")}: only flags belong in #${kind} lines`);
    for (const [k, v] of Object.entries(parsed)) if (k !== "_" && v !== undefined && !(Array.isArray(v) && v.length === 0)) flags[k] = v;
  }
  return { flags: flags as Partial<Parsed<A>>, ignored, kind };
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
