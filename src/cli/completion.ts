/**
 * `ebb completion bash|zsh|fish`: a completion script made from the commands' own flag tables,
 * so it never drifts from them. Job ids come from the queue when asked for (`--list-jobs`).
 */
import type { ArgsDef, CommandDef } from "./command.ts";
import { defineCommand } from "./command.ts";
import { COMMANDS, loadCommand } from "./commands.ts";
import { client, controllerArgs, guard, UsageError } from "./common.ts";
import { jobLabel } from "./jobid.ts";
import { out } from "../util/stdio.ts";

/** Commands whose arguments are job ids. */
const JOB_COMMANDS = ["cancel", "show", "hold", "release", "wait", "resize"];

interface Spec {
  name: string;
  summary: string;
  flags: { long: string; short: string[]; value: boolean; description: string }[];
}

async function specs(): Promise<Spec[]> {
  const out: Spec[] = [];
  for (const [name, c] of Object.entries(COMMANDS)) {
    if (c.hidden) continue;
    const def: CommandDef<ArgsDef> = await loadCommand(name);
    const flags = Object.entries(def.args).flatMap(([long, d]) =>
      d.type === "positional" ? [] : [{ long, short: d.alias === undefined ? [] : (typeof d.alias === "string" ? [d.alias] : [...d.alias]), value: d.type === "string", description: d.description }],
    );
    out.push({ name, summary: c.summary, flags });
  }
  return out;
}

const words = (f: Spec["flags"][number]) => [`--${f.long}`, ...f.short.map((s) => (s.length === 1 ? `-${s}` : `--${s}`))];

function bash(cmds: Spec[]): string {
  const cases = cmds
    .map((c) => {
      const all = c.flags.flatMap(words);
      const values = c.flags.filter((f) => f.value).flatMap(words);
      return `    ${c.name}) flags="${[...all, "--help"].join(" ")}"; values="${values.join(" ")}";;`;
    })
    .join("\n");
  return `# bash completion for ebb: source <(ebb completion bash), or put it in ~/.local/share/bash-completion/completions/ebb
_ebb() {
  local cur prev cmd flags values
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${cmds.map((c) => c.name).join(" ")} help --help --version" -- "$cur"))
    return
  fi
  cmd="\${COMP_WORDS[1]}"
  case "$cmd" in
${cases}
    help) COMPREPLY=($(compgen -W "${cmds.map((c) => c.name).join(" ")}" -- "$cur")); return;;
    *) return;;
  esac
  case " $values " in *" $prev "*) COMPREPLY=($(compgen -f -- "$cur")); return;; esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  case "$cmd" in
    ${JOB_COMMANDS.join("|")}) COMPREPLY=($(compgen -W "$(ebb completion --list-jobs 2>/dev/null)" -- "$cur"));;
    completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"));;
    run) COMPREPLY=($(compgen -c -- "$cur"));;
    *) COMPREPLY=($(compgen -f -- "$cur"));;
  esac
}
complete -F _ebb ebb
`;
}

function zsh(cmds: Spec[]): string {
  const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const cases = cmds.map((c) => `    ${c.name}) compadd -- ${[...c.flags.flatMap(words), "--help"].join(" ")};;`).join("\n");
  return `#compdef ebb
# zsh completion for ebb: source <(ebb completion zsh) after compinit, or save it as _ebb on your fpath
_ebb() {
  local -a cmds
  cmds=(${cmds.map((c) => q(`${c.name}:${c.summary.replace(/:/g, "\\:")}`)).join(" ")} 'help:Help on a command')
  if (( CURRENT == 2 )); then
    _describe 'command' cmds
    return
  fi
  local cmd=$words[2]
  if [[ $words[CURRENT] == -* ]]; then
    case $cmd in
${cases}
    esac
    return
  fi
  case $cmd in
    ${JOB_COMMANDS.join("|")}) compadd -- $(ebb completion --list-jobs 2>/dev/null);;
    completion) compadd -- bash zsh fish;;
    help) compadd -- ${cmds.map((c) => c.name).join(" ")};;
    run) _command_names;;
    *) _files;;
  esac
}
compdef _ebb ebb
`;
}

function fish(cmds: Spec[]): string {
  const q = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const lines = ["# fish completion for ebb: ebb completion fish | source, or save it as ~/.config/fish/completions/ebb.fish", "complete -c ebb -f"];
  for (const c of cmds) lines.push(`complete -c ebb -n __fish_use_subcommand -a ${c.name} -d ${q(c.summary)}`);
  lines.push(`complete -c ebb -n __fish_use_subcommand -a help -d 'Help on a command'`);
  for (const c of cmds) {
    for (const f of c.flags) {
      const short = f.short.filter((s) => s.length === 1).map((s) => ` -s ${s}`).join("");
      const longAliases = f.short.filter((s) => s.length > 1).map((s) => ` -l ${s}`).join("");
      lines.push(`complete -c ebb -n '__fish_seen_subcommand_from ${c.name}' -l ${f.long}${longAliases}${short}${f.value ? " -r -F" : ""} -d ${q(f.description.slice(0, 80))}`);
    }
  }
  lines.push(`complete -c ebb -n '__fish_seen_subcommand_from ${JOB_COMMANDS.join(" ")}' -a '(ebb completion --list-jobs 2>/dev/null)'`);
  lines.push(`complete -c ebb -n '__fish_seen_subcommand_from submit' -F`);
  lines.push(`complete -c ebb -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'`);
  lines.push(`complete -c ebb -n '__fish_seen_subcommand_from help' -a '${cmds.map((c) => c.name).join(" ")}'`);
  return `${lines.join("\n")}\n`;
}

const SHELLS = { bash, zsh, fish };

export default defineCommand({
  meta: {
    name: "completion",
    description: "Print a shell completion script (commands, flags, job ids from the queue): source <(ebb completion bash), source <(ebb completion zsh), ebb completion fish | source",
  },
  args: {
    shell: { type: "positional", description: "bash, zsh or fish" },
    "list-jobs": { type: "boolean", description: "Print the ids of active jobs and arrays, one a line (what the scripts complete job ids with)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("completion", async () => {
      if (args["list-jobs"]) {
        const { jobs } = await client(args).jobs({ state: "PENDING,RUNNING,ADAPTING" });
        const ids = new Set<string>();
        for (const j of jobs) {
          if (j.arrayJobId !== null) ids.add(String(j.arrayJobId));
          ids.add(jobLabel(j));
        }
        if (ids.size > 0) out(`${[...ids].join("\n")}\n`);
        return;
      }
      const make = SHELLS[args.shell as keyof typeof SHELLS];
      if (!make) throw new UsageError(`${args.shell === undefined ? "name a shell" : `unknown shell ${JSON.stringify(args.shell)}`}: ebb completion bash|zsh|fish`);
      out(make(await specs()));
    }),
});
