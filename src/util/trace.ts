/**
 * Timestamps across processes for finding where a protocol's time goes (bench/adapt.ts traces a
 * grow): with `EBB_TRACE=FILE` in its environment, a process appends one line per `mark`,
 * `MS_SINCE_EPOCH PID EVENT [DETAIL]`, to FILE. Off (one lookup) without it. The variable is read
 * at each mark: a warm rank takes its job's environment only when claimed.
 */
import { appendFileSync } from "node:fs";

export function mark(event: string, detail?: string | number): void {
  const file = process.env.EBB_TRACE;
  if (!file) return;
  const t = (performance.timeOrigin + performance.now()).toFixed(2);
  try {
    appendFileSync(file, `${t} ${process.pid} ${event}${detail === undefined ? "" : ` ${detail}`}\n`);
  } catch {
    // a trace is never worth failing for
  }
}
