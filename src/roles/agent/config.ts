/**
 * The agent's configuration file (`ebb agent --config FILE`, JSON; `ebb up --agent-config`, which
 * local agents read and agents on other hosts are sent): `hostStates`, the host rules of every node, and `nodes`, what differs per node
 * (model/host-rules.ts). The same file can serve a whole cluster.
 */
import { readFileSync } from "node:fs";
import { parseAgentConfig, resolveHostRules, type AgentConfig, type HostRules } from "../../model/host-rules.ts";

/** Reads and checks the file; the error names the file and the bad field. */
export function readAgentConfig(path: string): AgentConfig {
  return loadAgentConfig(path).file;
}

/** The file read and checked, with its text. */
function loadAgentConfig(path: string): { text: string; file: AgentConfig } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (text.length > 1 << 20) throw new Error(`${path}: larger than 1 MiB`);
  const file = parseAgentConfig(text);
  if ("error" in file) throw new Error(`${path}: ${file.error}`);
  return { text, file };
}

/**
 * The file's text for agents on other hosts (`ebb up --hosts`, `--slurm` send it on), checked
 * here first for every node of `names`, so that a bad rule stops ebb up, not each agent.
 */
export function agentConfigFor(path: string, names: readonly string[]): string {
  const { text, file } = loadAgentConfig(path);
  for (const name of names) hostRulesFor(file, path, name);
  return text;
}

/** Node `name`'s host rules from the file (undefined: it judges nothing). */
export function hostRulesFor(file: AgentConfig, path: string, name: string): HostRules | undefined {
  const rules = resolveHostRules(file, name);
  if (rules && "error" in rules) throw new Error(`${path}: for node ${name}: ${rules.error}`);
  return rules;
}
