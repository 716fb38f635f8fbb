/** Leveled logging to stderr; EBB_LOG=debug|info|warn|error picks the threshold. */
import { err } from "./stdio.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, "silent">;

function threshold(): number {
  const name = (process.env.EBB_LOG ?? "info") as keyof typeof LEVELS;
  return LEVELS[name] ?? LEVELS.info;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

function format(fields?: Record<string, unknown>): string {
  if (!fields) return "";
  let out = "";
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const s = typeof v === "string" ? v : v instanceof Error ? v.message : JSON.stringify(v);
    out += ` ${k}=${/[\s"]/.test(s) ? JSON.stringify(s) : s}`;
  }
  return out;
}

export function logger(component: string): Logger {
  const emit = (level: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < threshold()) return;
    err(`${new Date().toISOString()} ${component} ${level}: ${msg}${format(fields)}\n`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
