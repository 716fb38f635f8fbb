/**
 * Reads a file the kernel shows as one record in one read: open, read, close. For a file whose size
 * the kernel reports as 0 (all of /proc and cgroupfs) Bun's readFileSync reads into a new 256 KiB
 * buffer, and again until a read returns nothing: on the agent's thread, among its other
 * allocations, freeing those buffers made the allocator hand their pages back to the kernel
 * (madvise: 8-14 calls per null job on the 4 agents, 1.2-2.6 once the ~5 such files a job reads go
 * through this; each one a TLB flush on every CPU running a thread of the process), beside the one
 * read more each. Only for files shown whole by one `show` (a cgroup's single-value and key-value
 * files, /proc/PID/stat): the kernel's seq_file grows its buffer to hold that record and returns it
 * whole. Not for files of many records (cgroup.procs, tasks, /proc/self/mountinfo): a read of
 * those may stop at a page, short of the end (whether one is empty is told right: it reads as "").
 * A text that fills the buffer is read again whole by readFileSync.
 */
import { closeSync, constants, openSync, readFileSync, readSync } from "node:fs";

const BUFFER_BYTES = 16 << 10;
/** One per thread (each Worker loads its own copy of this module), used within one synchronous call. */
const buffer = Buffer.allocUnsafe(BUFFER_BYTES);

/** The file's text (UTF-8); throws as readFileSync does (ENOENT, EACCES, ...). */
export function readKernelRecord(path: string): string {
  const fd = openSync(path, constants.O_RDONLY);
  let n: number;
  try {
    n = readSync(fd, buffer, 0, BUFFER_BYTES, null);
  } finally {
    closeSync(fd);
  }
  return n < BUFFER_BYTES ? buffer.toString("utf8", 0, n) : readFileSync(path, "utf8");
}
