/**
 * The process's stdout and stderr, written with write(2). process.stdout and process.stderr are
 * streams that cost a compiled ebb 6-20 ms of CPU to build at their first use, more than most
 * commands take in all, and on Linux they write synchronously to files, pipes and terminals
 * anyway. A descriptor that someone sharing it left non-blocking (EAGAIN) is handed to the stream,
 * which waits for room; once the reader is gone (EPIPE) the rest is dropped.
 */
import { fstatSync, statSync, writeSync } from "node:fs";

type Fd = 1 | 2;
const mode: Record<Fd, "direct" | "stream" | "closed"> = { 1: "direct", 2: "direct" };
const stream = (fd: Fd) => (fd === 1 ? process.stdout : process.stderr);

export function write(fd: Fd, text: string): void {
  if (mode[fd] === "closed") return;
  if (mode[fd] === "stream") return void stream(fd).write(text);
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(fd, bytes, done);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EPIPE") mode[fd] = "closed";
    else if (code === "EAGAIN") {
      mode[fd] = "stream";
      stream(fd).write(bytes.subarray(done));
    } else throw e;
  }
}

/** Undefined when everything written to `fd` is out; else resolves once the stream has it out. */
export function drained(fd: Fd): Promise<void> | undefined {
  // 'drain' comes only after a write the stream refused (over its high-water mark).
  if (mode[fd] !== "stream" || !stream(fd).writableNeedDrain) return undefined;
  return new Promise((resolve) => stream(fd).once("drain", () => resolve()));
}

export const out = (text: string): void => write(1, text);
export const err = (text: string): void => write(2, text);

/**
 * Whether `fd` is a terminal: a character device other than /dev/null and its kin (major 1).
 * node:tty's isatty costs ~5 ms to load, for the same answer on Linux.
 */
export function isTerminal(fd: 0 | Fd): boolean {
  try {
    const s = fstatSync(fd);
    return s.isCharacterDevice() && ((s.rdev >> 8) & 0xfff) !== 1;
  } catch {
    return false;
  }
}

/** Whether this process has nothing to read on its standard input: it is closed, or /dev/null. */
export function stdinIsEmpty(): boolean {
  try {
    const s = fstatSync(0);
    return s.isCharacterDevice() && s.rdev === statSync("/dev/null").rdev;
  } catch {
    return true;
  }
}
