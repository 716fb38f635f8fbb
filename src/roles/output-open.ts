/**
 * Opening a job's output or error file on a root agent's thread, where what the user put at the
 * path must not stall it: an open of a FIFO waits for a reader, and the agent's own writes to a
 * FIFO or a terminal wait while nobody reads (or the terminal is stopped). Every job on the node
 * would wait with it (its heartbeats stop, the node goes DOWN, their jobs NODE_FAIL).
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";

/** Linux's major number of the memory devices (/dev/null, /dev/zero, /dev/full, /dev/urandom): writes to them never wait. */
const MEMORY_DEVICES = 1;

const major = (rdev: number): number => Number((BigInt(rdev) >> 8n) & 0xfffn) | Number((BigInt(rdev) >> 32n) & ~0xfffn);

const refused = (path: string, what: string) =>
  Object.assign(new Error(`output file ${path} is ${what}: job output goes to regular files, or /dev/null, /dev/zero or /dev/full`), { code: "EINVAL" });

/**
 * `openSync(path, flags, mode)` that never waits: non-blocking, no controlling terminal, and then
 * only a regular file or a memory device is kept (the fd's O_NONBLOCK changes nothing for those).
 */
export function openOutputFile(path: string, flags: number, mode = 0o644): number {
  let fd: number;
  try {
    fd = openSync(path, flags | constants.O_NONBLOCK | constants.O_NOCTTY, mode);
  } catch (e) {
    // A FIFO opened for writing without a reader (or a device with nothing behind it).
    if ((e as { code?: string }).code === "ENXIO") throw refused(path, "a FIFO with no reader, or a device with nothing behind it");
    throw e;
  }
  const st = fstatSync(fd);
  if (st.isFile() || (st.isCharacterDevice() && major(st.rdev) === MEMORY_DEVICES)) return fd;
  closeSync(fd);
  throw refused(path, st.isFIFO() ? "a FIFO" : st.isCharacterDevice() ? "a terminal or another device" : st.isSocket() ? "a socket" : "not a regular file");
}
