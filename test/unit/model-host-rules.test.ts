import { describe, expect, test } from "bun:test";
import { evaluate, parseExpression, type Expr } from "../../src/model/host-expr.ts";
import { firstJudgement, judge, type Judgement } from "../../src/model/host-judge.ts";
import { parseAgentConfig, resolveHostRules, type AgentConfig, type HostRules } from "../../src/model/host-rules.ts";

function rulesOf(file: AgentConfig, node = "node01"): HostRules {
  const r = resolveHostRules(file, node);
  if (r === undefined || "error" in r) throw new Error(`no rules: ${JSON.stringify(r)}`);
  return r;
}

/** Feeds `signal(t)` as cpu.other once a second from t0 to t1; the states taken, with when. */
function run(rules: HostRules, signal: (t: number) => number, t1: number, start: Judgement = firstJudgement(0)): { j: Judgement; changes: { t: number; state: string }[] } {
  let j = start;
  const changes: { t: number; state: string }[] = [];
  for (let t = (start.at ?? 0) + 1; t <= t1; t++) {
    const before = j.host.state;
    j = judge(rules, j, t, { "cpu.other": signal(t) });
    if (j.host.state !== before) changes.push({ t, state: j.host.state });
  }
  return { j, changes };
}

const cpuOnly = (extra: Record<string, unknown> = {}): HostRules => rulesOf({ hostStates: { rules: { "cpu.other": { busy: 0.25, overloaded: 0.6 } }, ...extra } });

describe("hysteresis and dwell", () => {
  test("a load oscillating inside the hysteresis band makes 0 state changes in 10 minutes", () => {
    // Unsmoothed, the worst case: a slow wave (longer than the dwell below busy's threshold) from
    // just above busy's exit (0.25 × 0.8 = 0.2) to just below overloaded, and a fast one.
    const rules = cpuOnly({ smoothing: 0 });
    const warm = run(rules, () => 0.4, 60);
    expect(warm.j.host.state).toBe("busy");
    const { changes, j } = run(rules, (t) => (t < 360 ? 0.4 + 0.19 * Math.sin((2 * Math.PI * t) / 120) : t % 2 ? 0.21 : 0.59), 660, warm.j);
    expect(changes).toEqual([]);
    expect(j.host.state).toBe("busy");
  });

  test("a fast swing across the whole band is smoothed away: 0 changes in 10 minutes", () => {
    const rules = cpuOnly(); // smoothing 10 s
    const warm = run(rules, () => 0.4, 60);
    const { changes } = run(rules, (t) => (t % 4 < 2 ? 0.1 : 0.8), 660, warm.j);
    expect(changes).toEqual([]);
  });

  test("a load that crosses the band changes the state, each state held at least the dwell", () => {
    const rules = cpuOnly({ smoothing: 0, dwell: 10 });
    // 60 s at 0.7, 60 s at 0.05, ten times.
    const { changes } = run(rules, (t) => (Math.floor(t / 60) % 2 === 0 ? 0.7 : 0.05), 1200);
    expect(changes.length).toBeGreaterThanOrEqual(19);
    expect(new Set(changes.map((c) => c.state))).toEqual(new Set(["overloaded", "free"]));
    for (let i = 1; i < changes.length; i++) expect(changes[i]!.t - changes[i - 1]!.t).toBeGreaterThanOrEqual(10);
  });

  test("a spike shorter than the dwell changes nothing; one as long does", () => {
    const rules = cpuOnly({ smoothing: 0, dwell: 10 });
    expect(run(rules, (t) => (t >= 100 && t < 109 ? 0.9 : 0), 300).changes).toEqual([]);
    expect(run(rules, (t) => (t >= 100 && t < 111 ? 0.9 : 0), 300).changes.map((c) => c.state)).toEqual(["overloaded", "free"]);
  });

  test("a sudden overload goes straight to overloaded after one dwell, and the rule that set it is named", () => {
    const rules = cpuOnly({ smoothing: 0, dwell: 5 });
    const { changes, j } = run(rules, (t) => (t >= 10 ? 0.9 : 0), 30);
    expect(changes).toEqual([{ t: 15, state: "overloaded" }]);
    expect(j.host.rule).toBe("cpu.other >= 0.6 for 5 s");
    expect(j.host.inputs).toEqual({ "cpu.other": 0.9 });
    expect(j.host.since).toBe(15_000);
  });

  test("EWMA: a step reaches 63 % after one time constant, whatever the sample gaps", () => {
    const rules = cpuOnly({ smoothing: 10 });
    let a = judge(rules, firstJudgement(0), 0, { "cpu.other": 0 });
    a = judge(rules, a, 10, { "cpu.other": 1 });
    let b = judge(rules, firstJudgement(0), 0, { "cpu.other": 0 });
    for (let t = 0.5; t <= 10; t += 0.5) b = judge(rules, b, t, { "cpu.other": 1 });
    expect(a.smoothed["cpu.other"]).toBeCloseTo(1 - Math.exp(-1), 6);
    expect(b.smoothed["cpu.other"]).toBeCloseTo(1 - Math.exp(-1), 6);
  });

  test("a missing input keeps its last value; users and commands are not smoothed by default", () => {
    const rules = rulesOf({ hostStates: { dwell: 0, rules: { users: { busy: 1 }, "cmd.check": { run: ["/bin/true"], busy: 1, owner: 3 } } } });
    let j = judge(rules, firstJudgement(0), 1, { users: 1, "cmd.check": 0 });
    expect(j.host.state).toBe("busy");
    j = judge(rules, j, 2, { users: 0 });
    expect(j.host.state).toBe("free");
    j = judge(rules, j, 3, { users: 0, "cmd.check": 3 });
    expect(j.host).toMatchObject({ state: "owner", rule: "cmd.check >= 3", inputs: { users: 0, "cmd.check": 3 } });
    j = judge(rules, j, 4, { users: 0 });
    expect(j.host.state).toBe("owner");
  });
});

describe("the expression", () => {
  const ex = (text: string): Expr => {
    const e = parseExpression(text);
    if ("error" in e) throw new Error(e.error);
    return e;
  };
  test("weighted sums and min/max over the rules' levels", () => {
    const levels = { a: 2, b: 1, "cpu.other": 0 };
    expect(evaluate(ex("max(a, b, cpu.other)"), levels)).toBe(2);
    expect(evaluate(ex("min(a,b)"), levels)).toBe(1);
    expect(evaluate(ex("0.5*a + 0.5*cpu.other"), levels)).toBe(1);
    expect(evaluate(ex("(a - b) * 3 / 2"), levels)).toBe(1.5);
    expect(evaluate(ex("-a + 4"), levels)).toBe(2);
    expect(evaluate(ex("a / cpu.other"), levels)).toBe(0);
  });
  test("errors say where", () => {
    expect(parseExpression("max(a,")).toEqual({ error: "expected a number, a rule or ( at the end" });
    expect(parseExpression("a + $")).toEqual({ error: 'unexpected "$" at column 5' });
    expect(parseExpression("avg(a)")).toEqual({ error: 'unknown function "avg" at column 1 (there are min and max)' });
    expect(parseExpression("a b")).toEqual({ error: 'expected an operator at column 3, found "b"' });
    expect(parseExpression("")).toEqual({ error: "empty" });
  });
  test("a weighted sum is busy when both rules are busy or one is overloaded", () => {
    const rules = rulesOf({ hostStates: { dwell: 0, smoothing: 0, rules: { "cpu.other": { busy: 0.25, overloaded: 0.6 }, "net.bytes": { busy: 1e6, overloaded: 1e7 } }, expression: "0.5*cpu.other + 0.5*net.bytes" } });
    const at = (cpu: number, net: number) => judge(rules, firstJudgement(0), 1, { "cpu.other": cpu, "net.bytes": net }).host;
    expect(at(0.3, 0).state).toBe("free");
    expect(at(0.3, 2e6).state).toBe("busy");
    expect(at(0.7, 0).state).toBe("busy");
    expect(at(0.7, 2e7)).toMatchObject({ state: "overloaded", rule: "cpu.other >= 0.6, net.bytes >= 10000000" });
    expect(at(0.7, 2e6)).toMatchObject({ state: "busy" });
  });
});

describe("the config file", () => {
  const err = (file: unknown, node = "node01") => {
    const parsed = parseAgentConfig(JSON.stringify(file));
    if ("error" in parsed) return parsed.error;
    const r = resolveHostRules(parsed, node);
    return r && "error" in r ? r.error : undefined;
  };
  test("no hostStates: nothing is judged", () => {
    expect(resolveHostRules({}, "node01")).toBeUndefined();
  });
  test("hostStates {} is a shared workstation's defaults", () => {
    const r = rulesOf({ hostStates: {} });
    expect(r.rules.map((x) => x.name)).toEqual(["cpu.other", "psi.mem", "users"]);
    expect(r).toMatchObject({ interval: 1, hysteresis: 0.2, dwell: 10, refresh: 15, expressionText: "max(cpu.other, psi.mem, users)" });
    expect(r.rules.find((x) => x.name === "users")!.smoothing).toBe(0);
    expect(r.rules.find((x) => x.name === "cpu.other")!.smoothing).toBe(10);
  });
  test("per node: a hostlist's entries replace or remove the cluster's rules one by one", () => {
    const file: AgentConfig = {
      hostStates: { rules: { "cpu.other": { busy: 0.3 }, users: { busy: 1 } }, dwell: 20 },
      nodes: { "ws[01-02]": { hostStates: { dwell: 5, refresh: 1, rules: { users: false, "cmd.owner": { run: ["/usr/local/bin/owner-here"], owner: 1 } } } } },
    };
    const ws = rulesOf(file, "ws02");
    expect([ws.dwell, ws.refresh]).toEqual([5, 1]);
    expect(ws.rules.map((x) => x.name)).toEqual(["cpu.other", "cmd.owner"]);
    expect(ws.rules[1]!.command).toEqual({ run: ["/usr/local/bin/owner-here"], timeout: 5, every: 10, user: "nobody" });
    expect(rulesOf(file, "ws03").rules.map((x) => x.name)).toEqual(["cpu.other", "users"]);
  });
  test("bad files name the field and the reason", () => {
    expect(err({ hostStates: { rules: { "cpu.other": { busy: 0.5, overloaded: 0.2 } } } })).toBe("hostStates.rules.cpu.other.overloaded: must be at least busy (0.5)");
    expect(err({ hostStates: { rules: { "cpu.other": {} } } })).toContain("hostStates.rules.cpu.other: give at least one threshold");
    expect(err({ hostStates: { rules: { "disk.full": { busy: 1 } } } })).toContain("hostStates.rules.disk.full: not an input; inputs are cpu.other, load1");
    expect(err({ hostStates: { interval: 0 } })).toContain("hostStates.interval:");
    expect(err({ hostStates: { refresh: 0 } })).toContain("hostStates.refresh:");
    expect(err({ hostStates: { colour: 1 } })).toContain('Unrecognized key: "colour"');
    expect(err({ hostStates: { rules: { "cmd.x": { busy: 1 } } } })).toBe('hostStates.rules.cmd.x.run: a command rule needs the command to run, e.g. "run": ["/usr/local/bin/check"]');
    expect(err({ hostStates: { rules: { users: { busy: 1, cgroup: "user.slice" } } } })).toBe("hostStates.rules.users.cgroup: only cpu.other reads a cgroup");
    expect(err({ nodes: { "ws[01-02]": { hostStates: { rules: { "cmd.y": { busy: 1 } } } } } }, "ws02")).toContain("nodes.ws[01-02].hostStates.rules.cmd.y.run: a command rule needs");
    expect(err({ hostStates: { expression: "max(cpu.other, load1)" } })).toBe('hostStates.expression: "load1" is not one of this node\'s rules (cpu.other, psi.mem, users)');
    expect(err({ hostStates: { expression: "max(cpu.other" } })).toBe('hostStates.expression: expected ")" at the end');
    expect(err({ nodes: { "ws[1": { hostStates: {} } } })).toContain("nodes.ws[1:");
    expect(err({ hostStates: { rules: { users: false } } })).toContain("no rules left");
    expect(parseAgentConfig("{")).toMatchObject({ error: expect.stringContaining("not JSON") });
    expect(parseAgentConfig('"x"')).toMatchObject({ error: expect.any(String) });
  });
});
