/**
 * The agent's configuration file (`ebb agent --config FILE`, JSON; `ebb up --agent-config` for
 * local agents): `hostStates`, the host rules of every node, and `nodes`, what differs per node
 * (model/host-rules.ts). The same file can serve a whole cluster.
 */
import { readFileSync } from "node:fs";
import { parseAgentConfig, resolveHostRules, type AgentConfig, type HostRules } from "../../model/host-rules.ts";

/** Reads and checks the file; the error names the file and the bad field. */
export function readAgentConfig(path: string): AgentConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (text.length > 1 << 20) throw new Error(`${path}: larger than 1 MiB`);
  const file = parseAgentConfig(text);
  if ("error" in file) throw new Error(`${path}: ${file.error}`);
  return file;
}

/** Node `name`'s host rules from the file (undefined: it judges nothing). */
export function hostRulesFor(file: AgentConfig, path: string, name: string): HostRules | undefined {
  const rules = resolveHostRules(file, name);
  if (rules && "error" in rules) throw new Error(`${path}: for node ${name}: ${rules.error}`);
  return rules;
}
