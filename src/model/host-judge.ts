/**
 * Judging a node's host state from its rules, one sample at a time; plain data in, state out.
 *
 * - Each input is smoothed (EWMA with the rule's time constant, so uneven sample gaps weigh right).
 * - Each rule's level has hysteresis: it rises to a level when the smoothed input reaches that
 *   level's threshold, and leaves it only when the input falls below threshold × (1 − hysteresis).
 * - The expression combines the levels; its value, rounded down, is what the rules say.
 * - Dwell: the node takes state k only once the rules have said at least k (going up) or at most k
 *   (going down) for `dwell` seconds without a break; a state therefore lasts at least that long.
 */
import { HOST_STATES, type HostState, type HostStateName } from "../domain/host-state.ts";
import { evaluate } from "./host-expr.ts";
import type { HostRules, Rule } from "./host-rules.ts";

export interface Judgement {
  host: HostState;
  /** Smoothed inputs and each rule's level after the last sample. */
  smoothed: Record<string, number>;
  levels: Record<string, number>;
  /** When the last sample was taken (s). */
  at?: number;
  /** Per level 0..3, since when the rules have said at least / at most it without a break (s); null: not now. */
  upSince: (number | null)[];
  downSince: (number | null)[];
}

const MAX_LEVEL = HOST_STATES.length - 1;

/** A node nothing has been judged on yet: free since `now` (s). */
export function firstJudgement(now: number): Judgement {
  return { host: { state: "free", rule: "", inputs: {}, since: Math.round(now * 1000) }, smoothed: {}, levels: {}, upSince: [now, null, null, null], downSince: [now, now, now, now] };
}

function ruleLevel(rule: Rule, x: number, previous: number, hysteresis: number): number {
  let level = 0;
  rule.thresholds.forEach((t, i) => {
    if (t === undefined) return;
    const k = i + 1;
    if (x >= (k <= previous ? t * (1 - hysteresis) : t)) level = k;
  });
  return level;
}

const fmt = (x: number) => (Math.abs(x) >= 1000 || Number.isInteger(x) ? String(Math.round(x)) : String(Number(x.toPrecision(3))));

/** Which rules put the node in `level`: "cpu.other ≥ 0.6", or the expression when no single rule does. */
function because(rules: HostRules, levels: Record<string, number>, level: number): string {
  if (level === 0) return "";
  const name = HOST_STATES[level]!;
  const who = rules.rules.filter((r) => (levels[r.name] ?? 0) >= level && r.thresholds[level - 1] !== undefined).map((r) => `${r.name} >= ${fmt(r.thresholds[level - 1]!)}`);
  const text = who.length > 0 ? who.join(", ") : `${rules.expressionText} >= ${level} (${name})`;
  return `${text}${rules.dwell > 0 ? ` for ${fmt(rules.dwell)} s` : ""}`.slice(0, 200);
}

/**
 * The judgement after one sample at `now` (s): `raw` has each input's measured value; an input
 * missing (not measurable, a command that timed out) keeps its last smoothed value.
 */
export function judge(rules: HostRules, prev: Judgement, now: number, raw: Readonly<Record<string, number | undefined>>): Judgement {
  const dt = prev.at === undefined ? 0 : Math.max(0, now - prev.at);
  const smoothed: Record<string, number> = { ...prev.smoothed };
  const levels: Record<string, number> = { ...prev.levels };
  for (const rule of rules.rules) {
    const x = raw[rule.name];
    if (x === undefined || !Number.isFinite(x)) continue;
    const old = smoothed[rule.name];
    const alpha = old === undefined || rule.smoothing === 0 ? 1 : 1 - Math.exp(-dt / rule.smoothing);
    smoothed[rule.name] = old === undefined ? x : old + alpha * (x - old);
    levels[rule.name] = ruleLevel(rule, smoothed[rule.name]!, prev.levels[rule.name] ?? 0, rules.hysteresis);
  }
  const said = Math.min(MAX_LEVEL, Math.max(0, Math.floor(evaluate(rules.expression, levels) + 1e-9)));
  const upSince = prev.upSince.map((s, k) => (said >= k ? (s ?? now) : null));
  const downSince = prev.downSince.map((s, k) => (said <= k ? (s ?? now) : null));
  const current = HOST_STATES.indexOf(prev.host.state);
  const held = (s: number | null) => s !== null && now - s >= rules.dwell;
  let next = current;
  for (let k = MAX_LEVEL; k > current; k--) if (held(upSince[k]!)) { next = k; break; }
  if (next === current) for (let k = 0; k < current; k++) if (held(downSince[k]!)) { next = k; break; }
  const inputs = Object.fromEntries(Object.entries(smoothed).map(([k, v]) => [k, Number(v.toPrecision(4))]));
  const host: HostState =
    next === current
      ? { ...prev.host, inputs }
      : { state: HOST_STATES[next] as HostStateName, rule: because(rules, levels, next), inputs, since: Math.round(now * 1000) };
  return { host, smoothed, levels, at: now, upSince, downSince };
}
