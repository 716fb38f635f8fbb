/**
 * Timestamps across processes for finding where a protocol's time goes (bench/adapt.ts traces a
 * grow): with `EBB_TRACE=FILE` in its environment, a process appends one line per `mark`,
 * `MS_SINCE_EPOCH PID EVENT [DETAIL]`, to FILE. Off (one lookup) without it. The variable is read
 * at each mark: a warm rank takes its job's environment only when claimed. With `EBB_TRACE_CPU` set
 * too, each mark also appends `THREAD EVENT CPU_MS MS_SINCE_EPOCH` to FILE.cpu: the CPU time of the
 * marking thread (CLOCK_THREAD_CPUTIME_ID, so an agents' thread is told from `ebb up`'s others),
 * which says what a step cost beside how long it waited for a core.
 */
import { appendFileSync } from "node:fs";

export function mark(event: string, detail?: string | number): void {
  const file = process.env.EBB_TRACE;
  if (!file) return;
  const t = (performance.timeOrigin + performance.now()).toFixed(2);
  try {
    appendFileSync(file, `${t} ${process.pid} ${event}${detail === undefined ? "" : ` ${detail}`}\n`);
    if (process.env.EBB_TRACE_CPU) appendFileSync(`${file}.cpu`, `${process.pid}/${threadTag()} ${event} ${threadCpuMs().toFixed(3)} ${t}\n`);
  } catch {
    // a trace is never worth failing for
  }
}

const CLOCK_THREAD_CPUTIME_ID = 3;
let clock: ((id: number, ts: BigInt64Array) => number) | undefined;
const ts = new BigInt64Array(2);

/** Loaded at the first such mark only: bun:ffi is not for every process that imports this. */
function threadCpuMs(): number {
  if (!clock) {
    const { FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const { libcSymbols } = require("./libc.ts") as typeof import("./libc.ts");
    clock = libcSymbols<{ clock_gettime: typeof clock }>({ clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } })?.clock_gettime;
    // As a failed dlopen did: the mark's catch drops the line.
    if (!clock) throw new Error("no clock_gettime in the C library");
  }
  clock!(CLOCK_THREAD_CPUTIME_ID, ts);
  return Number(ts[0]) * 1000 + Number(ts[1]) / 1e6;
}
let tag: string | undefined;
function threadTag(): string {
  return (tag ??= (require("node:worker_threads") as typeof import("node:worker_threads")).threadId.toString());
}
