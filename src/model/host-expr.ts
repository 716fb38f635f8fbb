/**
 * The expression that combines a node's host rules into one state (HPCM's complex rules): each
 * rule's level (0 free, 1 busy, 2 overloaded, 3 owner) by its name, numbers, + - * /, parentheses,
 * min(...) and max(...). `max(cpu.other, users)` is the worst rule; `0.5*cpu.other + 0.5*net.bytes`
 * a weighted sum (busy when both are busy, or one is overloaded). Parsed once, when the config is
 * read; evaluated each sample.
 */
export type Expr =
  | { k: "num"; v: number }
  | { k: "rule"; name: string }
  | { k: "neg"; a: Expr }
  | { k: "op"; op: "+" | "-" | "*" | "/"; a: Expr; b: Expr }
  | { k: "fn"; fn: "min" | "max"; args: Expr[] };

export const MAX_EXPRESSION = 500;
const TOKEN = /\s*(?:(\d+(?:\.\d*)?|\.\d+)|([a-z][a-z0-9_.]*)|([-+*/(),]))/y;

/** The expression's tree, or an error saying where it goes wrong. */
export function parseExpression(text: string): Expr | { error: string } {
  if (text.length > MAX_EXPRESSION) return { error: `longer than ${MAX_EXPRESSION} characters` };
  const tokens: { s: string; kind: "num" | "name" | "punct"; at: number }[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) {
      if (/^\s*$/.test(text.slice(at))) break;
      return { error: `unexpected "${text.slice(at).trim()[0]}" at column ${at + 1 + (text.slice(at).length - text.slice(at).trimStart().length)}` };
    }
    const s = m[1] ?? m[2] ?? m[3]!;
    tokens.push({ s, kind: m[1] !== undefined ? "num" : m[2] !== undefined ? "name" : "punct", at: TOKEN.lastIndex - s.length });
  }
  let i = 0;
  const peek = () => tokens[i];
  const fail = (what: string): never => {
    throw new Error(peek() ? `${what} at column ${peek()!.at + 1}, found "${peek()!.s}"` : `${what} at the end`);
  };
  const expect = (s: string) => (peek()?.s === s ? i++ : fail(`expected "${s}"`));
  const sum = (): Expr => {
    let a = product();
    while (peek()?.s === "+" || peek()?.s === "-") {
      const op = tokens[i++]!.s as "+" | "-";
      a = { k: "op", op, a, b: product() };
    }
    return a;
  };
  const product = (): Expr => {
    let a = factor();
    while (peek()?.s === "*" || peek()?.s === "/") {
      const op = tokens[i++]!.s as "*" | "/";
      a = { k: "op", op, a, b: factor() };
    }
    return a;
  };
  const factor = (): Expr => {
    const t = peek();
    if (!t) return fail("expected a number, a rule or (");
    if (t.kind === "num") return i++, { k: "num", v: Number(t.s) };
    if (t.s === "-") return i++, { k: "neg", a: factor() };
    if (t.s === "(") {
      i++;
      const e = sum();
      expect(")");
      return e;
    }
    if (t.kind === "name") {
      i++;
      if (peek()?.s !== "(") return { k: "rule", name: t.s };
      if (t.s !== "min" && t.s !== "max") throw new Error(`unknown function "${t.s}" at column ${t.at + 1} (there are min and max)`);
      i++;
      const args = [sum()];
      while (peek()?.s === ",") i++, args.push(sum());
      expect(")");
      return { k: "fn", fn: t.s, args };
    }
    return fail("expected a number, a rule or (");
  };
  try {
    if (tokens.length === 0) return { error: "empty" };
    const e = sum();
    if (i < tokens.length) fail("expected an operator");
    return e;
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** The rule names an expression reads. */
export function rulesOf(e: Expr, into = new Set<string>()): Set<string> {
  if (e.k === "rule") into.add(e.name);
  else if (e.k === "neg") rulesOf(e.a, into);
  else if (e.k === "op") rulesOf(e.a, rulesOf(e.b, into));
  else if (e.k === "fn") for (const a of e.args) rulesOf(a, into);
  return into;
}

/** The expression's value over the rules' levels (a rule without a level counts 0); a division by 0 is 0. */
export function evaluate(e: Expr, levels: Readonly<Record<string, number>>): number {
  switch (e.k) {
    case "num":
      return e.v;
    case "rule":
      return levels[e.name] ?? 0;
    case "neg":
      return -evaluate(e.a, levels);
    case "fn": {
      const xs = e.args.map((a) => evaluate(a, levels));
      return e.fn === "min" ? Math.min(...xs) : Math.max(...xs);
    }
    case "op": {
      const a = evaluate(e.a, levels);
      const b = evaluate(e.b, levels);
      if (e.op === "+") return a + b;
      if (e.op === "-") return a - b;
      if (e.op === "*") return a * b;
      return b === 0 ? 0 : a / b;
    }
  }
}
