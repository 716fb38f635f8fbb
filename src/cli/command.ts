/**
 * ebb's command-line parser and help, strict like getopt: an unknown flag, a flag without its
 * value and an argument no command takes are usage errors (exit 2, `ebb CMD: ...`, with a "did
 * you mean" when a known flag is close). It replaces citty, which parses with node's parseArgs in
 * non-strict mode (an unknown flag silently eats the next word), takes any `--no-X`, and has no
 * hook to refuse either; the help keeps citty's layout.
 */
import { UsageError } from "./errors.ts";
import { slurmOnlyReason } from "./slurm-flags.ts";
import { err, isTerminal, out } from "../util/stdio.ts";

interface FlagBase {
  description: string;
  /** Shown in place of the value in help: `--nodes=<N>`. */
  valueHint?: string;
}
export interface StringFlag extends FlagBase {
  type: "string";
  alias?: string | readonly string[];
  /** Every occurrence is kept, in order (default: the last one wins). */
  repeat?: boolean;
  /** The value may start with a dash (options for another program: --ssh-opts "-F cfg"). */
  dashValue?: boolean;
}
export interface BooleanFlag extends FlagBase {
  type: "boolean";
  alias?: string | readonly string[];
  /** Also accept `--no-NAME`, described so. */
  negativeDescription?: string;
}
export interface Positional extends FlagBase {
  type: "positional";
  required?: boolean;
  /** Takes every remaining argument. */
  variadic?: boolean;
}
export type ArgDef = StringFlag | BooleanFlag | Positional;
export type ArgsDef = Record<string, ArgDef>;

type ParsedArg<D> = D extends { type: "string"; repeat: true }
  ? string[]
  : D extends { type: "string" }
    ? string | undefined
    : D extends { type: "boolean" }
      ? boolean | undefined
      : D extends { type: "positional"; variadic: true }
        ? string[]
        : D extends { type: "positional"; required: true }
          ? string
          : string | undefined;

/** The parsed flags, and `_`: what follows `--` (or, with `stopAtPositional`, the first positional). */
export type Parsed<A extends ArgsDef> = { -readonly [K in keyof A]: ParsedArg<A[K]> } & { _: string[] };

export interface CommandDef<A extends ArgsDef = ArgsDef> {
  meta: { name: string; description: string; hidden?: boolean };
  args: A;
  /** Flags end at the first positional: it and what follows are a program and its arguments (ebb run). */
  stopAtPositional?: boolean;
  /**
   * The arguments are the command's own (`raw`, and `args._`; `args` is for its help only): ebb
   * srun's are srun's, ebb mpicc's the compiler's. Only a leading --help or -h is ebb's.
   */
  ownParser?: boolean;
  /** With ownParser, a leading -h is the command's too (squeue's -h is --noheader); --help stays ebb's. */
  ownShortHelp?: boolean;
  run(ctx: { args: Parsed<A>; raw: string[] }): Promise<unknown> | unknown;
}

/** Keeps flag definitions' literal types. */
export function defineArgs<const A extends ArgsDef>(args: A): A {
  return args;
}

export function defineCommand<const A extends ArgsDef>(def: CommandDef<A>): CommandDef<A> {
  return def;
}

const aliasesOf = (d: ArgDef): readonly string[] => (d.type === "positional" || d.alias === undefined ? [] : typeof d.alias === "string" ? [d.alias] : d.alias);

const flagName = (n: string) => (n.length === 1 ? `-${n}` : `--${n}`);

/** Known flags by every name they answer to (long names and aliases). */
function flagTable(args: ArgsDef): Map<string, [string, StringFlag | BooleanFlag]> {
  const table = new Map<string, [string, StringFlag | BooleanFlag]>();
  for (const [name, d] of Object.entries(args)) {
    if (d.type === "positional") continue;
    table.set(name, [name, d]);
    for (const a of aliasesOf(d)) table.set(a, [name, d]);
  }
  return table;
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The closest of `names` to `word`, if close enough to be a likely typo. */
export function closest(word: string, names: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const n of names) {
    const d = n.startsWith(word) && word.length >= 3 ? 0.5 : distance(word, n);
    if (d < bestD) [best, bestD] = [n, d];
  }
  return bestD <= (word.length <= 3 ? 1 : 2) ? best : undefined;
}

function unknownFlag(text: string, known: Map<string, unknown>, cmd: string): UsageError {
  const bare = text.replace(/^-+/, "").replace(/=.*$/, "");
  const why = slurmOnlyReason(bare);
  if (why) return new UsageError(`unknown flag ${text.replace(/=.*$/, "")} (${why})`);
  const guess = closest(bare, known.keys());
  return new UsageError(`unknown flag ${text.replace(/=.*$/, "")}${guess ? `; did you mean ${flagName(guess)}?` : ""} (ebb ${cmd} --help lists the flags)`);
}

/** A dash-word that is a value, not a flag: a negative number or a lone "-". */
const isValueLike = (a: string) => a === "-" || /^-\d/.test(a);

export interface ParseOptions {
  stopAtPositional?: boolean;
  /** Called for unknown flags instead of failing (with the rest of the words); returns how many words it took. */
  onUnknown?: (flag: string, rest: readonly string[]) => number;
}

/** Parses `raw` against `args`; throws UsageError. `help` is set when -h/--help was given. */
export function parse<A extends ArgsDef>(cmd: string, args: A, raw: readonly string[], opts: ParseOptions = {}): Parsed<A> & { help?: true } {
  const table = flagTable(args);
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  let rest: string[] = [];
  const set = (name: string, def: StringFlag | BooleanFlag, value: string | boolean) => {
    if (def.type === "string" && def.repeat) ((values[name] ??= []) as string[]).push(value as string);
    else values[name] = value;
  };
  const takeValue = (shown: string, i: number, dashValue?: boolean): string => {
    const next = raw[i + 1];
    if (next === undefined || (next.startsWith("-") && !isValueLike(next) && !dashValue)) throw new UsageError(`${shown} needs a value`);
    return next;
  };
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i]!;
    if (a === "--") {
      rest = raw.slice(i + 1);
      break;
    }
    if (a === "--help" || a === "-h") return Object.assign(values, { _: [], help: true as const }) as never;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      let entry = table.get(name);
      let negated = false;
      if (!entry && name.startsWith("no-")) {
        const e = table.get(name.slice(3));
        if (e && e[1].type === "boolean" && e[1].negativeDescription) [entry, negated] = [e, true];
      }
      if (!entry) {
        if (opts.onUnknown) {
          i += opts.onUnknown(a, raw.slice(i + 1));
          continue;
        }
        throw unknownFlag(a, table, cmd);
      }
      const [main, def] = entry;
      if (def.type === "boolean") {
        if (eq >= 0) throw new UsageError(`--${name} takes no value`);
        set(main, def, !negated);
      } else {
        const value = eq >= 0 ? a.slice(eq + 1) : takeValue(`--${name}`, i++, def.dashValue);
        if (value === "") throw new UsageError(`--${name} needs a value`);
        set(main, def, value);
      }
      continue;
    }
    if (a.startsWith("-") && !isValueLike(a)) {
      // -l, -N 2, -N2, -lN2: getopt's clusters of short flags.
      for (let k = 1; k < a.length; k++) {
        const ch = a[k]!;
        const entry = table.get(ch);
        if (!entry) {
          if (opts.onUnknown && k === 1) {
            i += opts.onUnknown(a, raw.slice(i + 1));
            break;
          }
          if (k === 1 && a.length > 2 && table.has(a.slice(1))) throw new UsageError(`unknown flag ${a}; did you mean --${a.slice(1)}?`);
          throw unknownFlag(`-${ch}`, table, cmd);
        }
        const [main, def] = entry;
        if (def.type === "boolean") {
          set(main, def, true);
          continue;
        }
        const attached = a.slice(k + 1).replace(/^=/, "");
        set(main, def, attached !== "" ? attached : takeValue(`-${ch}`, i++));
        break;
      }
      continue;
    }
    if (opts.stopAtPositional) {
      rest = raw.slice(i);
      break;
    }
    positionals.push(a);
  }
  for (const [name, d] of Object.entries(args)) {
    if (d.type === "string" && d.repeat) values[name] ??= [];
    if (d.type !== "positional") continue;
    if (d.variadic) values[name] = positionals.splice(0);
    else if (positionals.length > 0) values[name] = positionals.shift();
    else if (d.required) throw new UsageError(`missing ${name.toUpperCase()}; usage: ${usageLine(cmd, args)}`);
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument${positionals.length > 1 ? "s" : ""} ${positionals.map((p) => JSON.stringify(p)).join(" ")} (ebb ${cmd} --help says what it takes)`);
  return Object.assign(values, { _: rest }) as never;
}

// ---------------------------------------------------------------------------------------------
// Help, in citty's layout: colours only on a terminal (and never with NO_COLOR).

const colour = () => isTerminal(1) && !process.env.NO_COLOR;
const paint = (code: string, end: string) => (t: string) => (colour() ? `\x1b[${code}m${t}\x1b[${end}m` : t);
const cyan = paint("36", "39");
const gray = paint("90", "39");
const heading = (t: string) => paint("4", "24")(paint("1", "22")(t));

const plainLength = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "").length;

/** The width help is wrapped to: $COLUMNS, else the terminal's, else 80 (never under 40). */
export function helpWidth(): number {
  const env = Number(process.env.COLUMNS);
  const tty = isTerminal(1) ? process.stdout.columns : undefined;
  const w = Number.isInteger(env) && env > 0 ? env : tty || 80;
  return Math.max(40, w);
}

/**
 * `text` in lines of at most `width` visible characters, broken at spaces; a word longer than a
 * line is broken after a `|` or `,` where it can be, else where it must.
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  const push = (word: string) => {
    if (line === "") line = word;
    else if (plainLength(line) + 1 + plainLength(word) <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  };
  for (const word of text.split(" ").filter((w) => w !== "")) {
    if (plainLength(word) <= width) {
      push(word);
      continue;
    }
    let rest = word;
    while (plainLength(rest) > width) {
      const cut = Math.max(rest.lastIndexOf("|", width - 1), rest.lastIndexOf(",", width - 1));
      const at = cut > 0 ? cut + 1 : width;
      push(rest.slice(0, at));
      lines.push(line);
      line = "";
      rest = rest.slice(at);
    }
    push(rest);
  }
  if (line !== "") lines.push(line);
  return lines.length > 0 ? lines : [""];
}

/**
 * Two columns, the second wrapped to what `width` leaves it; a first-column entry too wide to
 * leave the second a third of the width puts its description on the lines below, indented.
 */
function columns(rows: [string, string][], width: number): string {
  const cap = Math.floor(width / 2.5);
  const w = Math.max(0, ...rows.map((r) => plainLength(r[0])).filter((n) => n <= cap));
  const indent = 2 + w + 2;
  const out: string[] = [];
  for (const [a, b] of rows) {
    const text = wrap(b, width - indent);
    if (plainLength(a) > w) out.push(`  ${a}`, ...text.map((l) => `${" ".repeat(indent)}${l}`));
    else out.push(`  ${a}${" ".repeat(w - plainLength(a))}  ${text[0]}`, ...text.slice(1).map((l) => `${" ".repeat(indent)}${l}`));
  }
  return out.join("\n");
}

function hint(d: StringFlag | BooleanFlag): string {
  return d.type === "string" ? `=<${d.valueHint ?? "value"}>` : "";
}

function usageLine(cmd: string, args: ArgsDef): string {
  const pos = Object.entries(args)
    .filter(([, d]) => d.type === "positional")
    .map(([n, d]) => {
      const p = d as Positional;
      const name = `${n.toUpperCase()}${p.variadic ? "..." : ""}`;
      return p.required ? `<${name}>` : `[${name}]`;
    });
  return `ebb ${cmd} [OPTIONS]${pos.length ? ` ${pos.join(" ")}` : ""}`;
}

/** A command's help, wrapped to `width` columns (default: helpWidth()). */
export function renderUsage(def: CommandDef<ArgsDef>, version: string, width = helpWidth()): string {
  const lines: string[] = [...wrap(`${def.meta.description} (ebb ${def.meta.name} v${version})`, width).map(gray), ""];
  lines.push(...usage(usageLine(def.meta.name, def.args), width), "");
  const pos: [string, string][] = [];
  const flags: [string, string][] = [];
  for (const [name, d] of Object.entries(def.args)) {
    if (d.type === "positional") {
      pos.push([cyan(name.toUpperCase()), d.description + (d.required ? " (Required)" : "")]);
      continue;
    }
    flags.push([cyan([...aliasesOf(d).map(flagName), `--${name}`].join(", ") + hint(d)), d.description]);
    if (d.type === "boolean" && d.negativeDescription) flags.push([cyan(`--no-${name}`), d.negativeDescription]);
  }
  if (pos.length > 0) lines.push(heading("ARGUMENTS"), "", columns(pos, width).replace(/\(Required\)/g, gray("(Required)")), "");
  if (flags.length > 0) lines.push(heading("OPTIONS"), "", columns(flags, width), "");
  return lines.join("\n");
}

/** `USAGE <line>`, the line wrapped after the heading (continued under its start). */
function usage(line: string, width: number): string[] {
  const text = wrap(line, width - 6);
  return [`${heading("USAGE")} ${cyan(text[0]!)}`, ...text.slice(1).map((l) => `      ${cyan(l)}`)];
}

export function renderMainUsage(description: string, version: string, commands: [string, string][], width = helpWidth()): string {
  return [
    ...wrap(`${description} (ebb v${version})`, width).map(gray),
    "",
    ...usage(`ebb [--help|--version] ${commands.map((c) => c[0]).join("|")}`, width),
    "",
    heading("COMMANDS"),
    "",
    columns(
      commands.map(([n, d]) => [cyan(n), d]),
      width,
    ),
    "",
    ...wrap(`Use ${cyan("ebb help <command>")} or ${cyan("ebb <command> --help")} for more information about a command.`, width),
    "",
  ].join("\n");
}

/** Parses the command line and runs the command: usage errors are one line and exit 2. */
export async function runCommand(def: CommandDef<ArgsDef>, raw: string[], version: string): Promise<void> {
  if (def.ownParser && raw[0] !== "--help" && (raw[0] !== "-h" || def.ownShortHelp)) return void (await def.run({ args: { _: raw } as Parsed<ArgsDef>, raw }));
  let args: Parsed<ArgsDef> & { help?: true };
  try {
    args = parse(def.meta.name, def.args, raw, { stopAtPositional: def.stopAtPositional });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`ebb ${def.meta.name}: ${e.message}\n`);
    process.exit(2);
  }
  if (args.help) {
    out(`${renderUsage(def, version)}\n`);
    process.exit(0);
  }
  await def.run({ args, raw });
}
