/**
 * Leveled logging to stderr; EBB_LOG=debug|info|warn|error picks the threshold. Text lines by
 * default; `setLogFormat("json")` (the daemons' --log-format json) writes one JSON object a line:
 * {time, level, role, msg, ...fields}.
 */
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

export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
let logFormat: LogFormat = "text";

export const currentLogFormat = (): LogFormat => logFormat;

/** How every logger of this process writes from now on. */
export function setLogFormat(f: LogFormat): void {
  logFormat = f;
}

function jsonLine(time: string, level: Level, role: string, msg: string, fields?: Record<string, unknown>): string {
  const out: Record<string, unknown> = { time, level, role, msg };
  for (const [k, v] of Object.entries(fields ?? {})) {
    if (v === undefined || k in out) continue;
    out[k] = v instanceof Error ? v.message : v;
  }
  return `${JSON.stringify(out)}\n`;
}

export function logger(component: string): Logger {
  const emit = (level: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < threshold()) return;
    const time = new Date().toISOString();
    err(logFormat === "json" ? jsonLine(time, level, component, msg, fields) : `${time} ${component} ${level}: ${msg}${format(fields)}\n`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
