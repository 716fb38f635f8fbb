/**
 * A node's host rules as its agent's config file gives them (`hostStates`, and per node under
 * `nodes`), checked and resolved with the defaults of a shared workstation. Each rule reads one
 * input the agent measures and says from which value on the node is busy, overloaded or wanted by
 * its owner; the expression combines the rules' levels (host-expr.ts); host-judge.ts smooths,
 * holds and times them.
 */
import { z } from "zod";
import { expandHostlist } from "../util/hostlist.ts";
import { describeIssues } from "../util/zod.ts";
import { MAX_EXPRESSION, parseExpression, rulesOf, type Expr } from "./host-expr.ts";

/** What an agent measures, by the name rules and the expression use (`cmd.NAME` for a command's exit status). */
export const HOST_INPUTS = {
  "cpu.other": "share of the machine's CPU time (0-1) used by processes that are not ebb jobs (or by one cgroup: `cgroup`)",
  load1: "1-minute load average (ebb's jobs included)",
  "psi.cpu": "CPU pressure, % of time some task waited for CPU (avg10)",
  "psi.mem": "memory pressure, % of time some task stalled on memory (avg10)",
  "psi.io": "I/O pressure, % of time some task stalled on I/O (avg10)",
  "net.bytes": "bytes/s received and sent on interfaces other than loopback",
  users: "users logged in (distinct names in utmp with a live session)",
} as const;
/** Inputs that are counts or codes: not smoothed unless a rule says so (an average of 0 and 1 logins never reaches 1). */
const DISCRETE = (name: string) => name === "users" || name.startsWith("cmd.");

const RULE_NAME = /^(cpu\.other|load1|psi\.(cpu|mem|io)|net\.bytes|users|cmd\.[a-z0-9_]{1,32})$/;
const seconds = (max: number) => z.number().min(0).max(max);

const ruleSchema = z
  .strictObject({
    busy: z.number().nonnegative().optional(),
    overloaded: z.number().nonnegative().optional(),
    owner: z.number().nonnegative().optional(),
    /** EWMA time constant, seconds (0: none); default: the config's `smoothing`, 0 for users and commands. */
    smoothing: seconds(3600).optional(),
    /** cpu.other only: measure this cgroup's CPU (path under the cgroup v2 mount, e.g. "user.slice") instead of all that is not ebb's. */
    cgroup: z.string().regex(/^[A-Za-z0-9_.@:-]+(\/[A-Za-z0-9_.@:-]+)*$/, "a cgroup path under the cgroup v2 mount, e.g. user.slice").max(256).optional(),
    /** cmd.* only: the command (argv, no shell) whose exit status is the input. */
    run: z.array(z.string().min(1).max(4096)).min(1).max(64).optional(),
    /** cmd.*: seconds the command may run before it is killed (it then counts as missing). */
    timeout: z.number().positive().max(300).optional(),
    /** cmd.*: seconds between runs. */
    every: z.number().positive().max(3600).optional(),
    /** cmd.*: whom a root agent runs it as (default nobody). */
    user: z.string().regex(/^[a-z_][a-z0-9_.-]{0,31}$/, "a user name").optional(),
  })
  .superRefine((r, ctx) => {
    const given = (["busy", "overloaded", "owner"] as const).filter((k) => r[k] !== undefined);
    if (given.length === 0) ctx.addIssue({ code: "custom", message: "give at least one threshold: busy, overloaded or owner" });
    for (let i = 1; i < given.length; i++)
      if (r[given[i]!]! < r[given[i - 1]!]!) ctx.addIssue({ code: "custom", path: [given[i]!], message: `must be at least ${given[i - 1]} (${r[given[i - 1]!]})` });
  });
export type RuleConfig = z.infer<typeof ruleSchema>;

const settingsSchema = z.strictObject({
  /** Seconds between samples. */
  interval: z.number().min(0.1).max(300).optional(),
  /** EWMA time constant of measured rates, seconds (0: none). */
  smoothing: seconds(3600).optional(),
  /** A level is left only once its input falls below threshold × (1 − hysteresis). */
  hysteresis: z.number().min(0).max(0.9).optional(),
  /** Seconds the rules must say a new state before the node takes it. */
  dwell: seconds(86_400).optional(),
  /** Seconds between resends of an unchanged state whose inputs moved (listings show fresh inputs). */
  refresh: z.number().min(0.1).max(86_400).optional(),
  /** The rules by input name; false removes a default rule (or, per node, the cluster's). */
  rules: z
    .record(z.string(), z.union([ruleSchema, z.literal(false)]))
    .superRefine((rules, ctx) => {
      for (const name of Object.keys(rules))
        if (!RULE_NAME.test(name)) ctx.addIssue({ code: "custom", path: [name], message: `not an input; inputs are ${Object.keys(HOST_INPUTS).join(", ")} and cmd.NAME` });
    })
    .optional(),
  /** How the rules' levels combine (default: the max of all rules). */
  expression: z.string().max(MAX_EXPRESSION).optional(),
});
export type HostStatesConfig = z.infer<typeof settingsSchema>;

/** The agent's config file: `hostStates` for every node, and per node (a hostlist such as ws[01-04]) what differs. */
export const AgentConfig = z.strictObject({
  hostStates: settingsSchema.optional(),
  nodes: z.record(z.string().min(1).max(1000), z.strictObject({ hostStates: settingsSchema.optional() })).optional(),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

/** A shared workstation: others' CPU, memory stalls, someone logged in. */
export const WORKSTATION = {
  interval: 1,
  smoothing: 10,
  hysteresis: 0.2,
  dwell: 10,
  refresh: 15,
  rules: {
    "cpu.other": { busy: 0.25, overloaded: 0.6 },
    "psi.mem": { busy: 20, overloaded: 50 },
    users: { busy: 1 },
  } as Record<string, RuleConfig>,
} as const;

export interface Rule {
  name: string;
  /** Thresholds by level: [busy, overloaded, owner], undefined where the rule gives none. */
  thresholds: [number | undefined, number | undefined, number | undefined];
  smoothing: number;
  cgroup?: string;
  command?: { run: string[]; timeout: number; every: number; user: string };
}

export interface HostRules {
  interval: number;
  hysteresis: number;
  dwell: number;
  refresh: number;
  rules: Rule[];
  expression: Expr;
  expressionText: string;
}

/**
 * The rules of node `name`: the workstation defaults, then the file's `hostStates`, then each
 * `nodes` entry whose hostlist names it (in the file's order). Undefined when the file has no
 * `hostStates` for this node: the agent then judges nothing and its node stays free.
 */
export function resolveHostRules(file: AgentConfig, name: string): HostRules | { error: string } | undefined {
  const layers: { at: string; s: HostStatesConfig }[] = [];
  if (file.hostStates) layers.push({ at: "hostStates", s: file.hostStates });
  for (const [hosts, o] of Object.entries(file.nodes ?? {})) {
    const names = expandHostlist(hosts);
    if ("error" in names) return { error: `nodes.${hosts}: ${names.error}` };
    if (names.includes(name) && o.hostStates) layers.push({ at: `nodes.${hosts}.hostStates`, s: o.hostStates });
  }
  if (layers.length === 0) return undefined;
  let interval: number = WORKSTATION.interval;
  let smoothing: number = WORKSTATION.smoothing;
  let hysteresis: number = WORKSTATION.hysteresis;
  let dwell: number = WORKSTATION.dwell;
  let refresh: number = WORKSTATION.refresh;
  // Each rule with where it was set, for errors.
  let configs: Record<string, { r: RuleConfig; at: string }> = Object.fromEntries(Object.entries(WORKSTATION.rules).map(([k, r]) => [k, { r, at: "defaults" }]));
  let expression: { text: string; at: string } | undefined;
  for (const { at, s } of layers) {
    interval = s.interval ?? interval;
    smoothing = s.smoothing ?? smoothing;
    hysteresis = s.hysteresis ?? hysteresis;
    dwell = s.dwell ?? dwell;
    refresh = s.refresh ?? refresh;
    // The cluster-wide list replaces the defaults; a node's entries replace or remove the cluster's one by one.
    if (s.rules && at === "hostStates") configs = {};
    for (const [k, r] of Object.entries(s.rules ?? {})) {
      if (r === false) delete configs[k];
      else configs[k] = { r, at: `${at}.rules.${k}` };
    }
    if (s.expression !== undefined) expression = { text: s.expression, at: `${at}.expression` };
  }
  const rules: Rule[] = [];
  for (const [name, { r, at }] of Object.entries(configs)) {
    if (r.cgroup !== undefined && name !== "cpu.other") return { error: `${at}.cgroup: only cpu.other reads a cgroup` };
    const isCommand = name.startsWith("cmd.");
    if (isCommand !== (r.run !== undefined)) return { error: isCommand ? `${at}.run: a command rule needs the command to run, e.g. "run": ["/usr/local/bin/check"]` : `${at}.run: only cmd.NAME rules run a command` };
    if (!isCommand && (r.timeout ?? r.every ?? r.user) !== undefined) return { error: `${at}: timeout, every and user are for cmd.NAME rules` };
    rules.push({
      name,
      thresholds: [r.busy, r.overloaded, r.owner],
      smoothing: r.smoothing ?? (DISCRETE(name) ? 0 : smoothing),
      ...(r.cgroup !== undefined ? { cgroup: r.cgroup } : {}),
      ...(r.run ? { command: { run: r.run, timeout: r.timeout ?? 5, every: Math.max(r.every ?? 10, interval), user: r.user ?? "nobody" } } : {}),
    });
  }
  if (rules.length === 0) return { error: "hostStates.rules: no rules left for this node (give one, or leave hostStates out to judge nothing)" };
  if (rules.length > 32) return { error: "hostStates.rules: at most 32 rules" };
  const text = expression?.text ?? `max(${rules.map((r) => r.name).join(", ")})`;
  const parsed = parseExpression(text);
  if ("error" in parsed) return { error: `${expression?.at ?? "expression"}: ${parsed.error}` };
  for (const used of rulesOf(parsed))
    if (!rules.some((r) => r.name === used)) return { error: `${expression?.at ?? "expression"}: "${used}" is not one of this node's rules (${rules.map((r) => r.name).join(", ")})` };
  return { interval, hysteresis, dwell, refresh, rules, expression: parsed, expressionText: text };
}

/** Parses the config file's JSON text; the error names every bad field. */
export function parseAgentConfig(text: string): AgentConfig | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
  const r = AgentConfig.safeParse(raw);
  return r.success ? r.data : { error: describeIssues(r.error) };
}
