/**
 * Reading the small files the kernel makes (cgroup and /proc), as the agent does a few times a job.
 * readFileSync reads a size-0 file (every such file reports size 0) into a fresh 256 KiB buffer
 * (a quarter MiB for the garbage collector each time, five times a job). Here the reads go into a
 * buffer kept for the purpose, grown for a longer file. Read to the end: a file of many records
 * (cgroup.procs, tasks, /proc/PID/maps) comes a page at a time, so a short read is not its end.
 */
import { closeSync, constants, openSync, readSync } from "node:fs";

const CHUNK = 4096;
let buffer = Buffer.allocUnsafe(CHUNK);

/**
 * The text of a kernel file, undefined if it cannot be read (gone, or not there on this host).
 * `oneRecord`: the kernel renders the file in one piece (a cgroup control file such as cpu.stat or
 * memory.peak, /proc/PID/stat: one show, not a list), so a read shorter than the buffer is all of
 * it and no second read is made to see the end.
 */
export function readKernelFile(path: string, oneRecord = false): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch {
    return undefined;
  }
  try {
    let got = 0;
    for (;;) {
      const n = readSync(fd, buffer, got, buffer.length - got, null);
      if (n === 0) return buffer.toString("utf8", 0, got);
      got += n;
      if (got < buffer.length) {
        if (oneRecord) return buffer.toString("utf8", 0, got);
        continue;
      }
      const bigger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(bigger, 0, 0, got);
      buffer = bigger;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
