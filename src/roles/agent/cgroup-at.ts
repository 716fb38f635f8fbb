/**
 * The agent's cgroup directories held open, and the job cgroups and files under them reached
 * relative to them (`openat`, `mkdirat`, `unlinkat`, `renameat`), so that the kernel does not walk
 * the whole path (7-8 components for a v1 memory cgroup here:
 * `/sys/fs/cgroup/memory/process_api/ID/ebb-agent-NAME-PID/job-N/memory.limit_in_bytes`) for each
 * of the ~20 cgroup calls of a job: those walks were the agent's largest kernel item per null job
 * (closing22: 3.9 % of all its samples). A path not under a held directory, or a thread without
 * the C library's calls, goes through node:fs as before, with the same results and errors.
 *
 * Held per thread (each Worker loads its own copy of this module): the agents of one `ebb up`
 * thread hold one each per hierarchy. Close-on-exec and `O_PATH`: no job process gets one, and
 * the descriptor grants nothing that the path does not (it opens nothing for reading or writing).
 */
import { closeSync, constants, mkdirSync, openSync, readFileSync, readSync, renameSync, rmdirSync, writeSync } from "node:fs";
import { constants as os } from "node:os";
import { FFIType, read } from "bun:ffi";
import { libcSymbols } from "../../util/libc.ts";

type Libc = {
  openat(dir: number, path: Uint8Array, flags: number, mode: number): number;
  mkdirat(dir: number, path: Uint8Array, mode: number): number;
  unlinkat(dir: number, path: Uint8Array, flags: number): number;
  renameat(fromDir: number, from: Uint8Array, toDir: number, to: Uint8Array): number;
  read(fd: number, buf: Uint8Array, n: number): number;
  write(fd: number, buf: Uint8Array, n: number): number;
  close(fd: number): number;
  __errno_location(): number;
};

const O_PATH = 0o10000000;
// x86-64 and arm64 (node:fs has no O_CLOEXEC: it opens every file close-on-exec itself).
const O_CLOEXEC = 0o2000000;
const AT_REMOVEDIR = 0x200;
const BUFFER_BYTES = 16 << 10;

let libc: Libc | null | undefined;
function lib(): Libc | null {
  if (libc !== undefined) return libc;
  const i32 = FFIType.i32;
  libc =
    libcSymbols<Libc>({
      openat: { args: [i32, FFIType.ptr, i32, FFIType.u32], returns: i32 },
      mkdirat: { args: [i32, FFIType.ptr, FFIType.u32], returns: i32 },
      unlinkat: { args: [i32, FFIType.ptr, i32], returns: i32 },
      renameat: { args: [i32, FFIType.ptr, i32, FFIType.ptr], returns: i32 },
      read: { args: [i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64_fast },
      write: { args: [i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64_fast },
      close: { args: [i32], returns: i32 },
      __errno_location: { args: [], returns: FFIType.ptr },
    }) ?? null;
  return libc;
}

/** Errno numbers to their names (ENOENT, EBUSY, ...), as node:fs puts them in `code`. */
const errnoNames = new Map(Object.entries(os.errno).map(([name, n]) => [n, name]));

/** The error node:fs would throw for a failed call: `code` is what callers test. */
function failure(l: Libc, syscall: string, path: string): NodeJS.ErrnoException {
  const errno = read.i32(l.__errno_location() as never, 0);
  const code = errnoNames.get(errno) ?? `E${errno}`;
  return Object.assign(new Error(`${code}: ${syscall} '${path}'`), { errno: -errno, code, syscall, path });
}

const cString = (s: string) => Buffer.from(`${s}\0`);
const buffer = Buffer.allocUnsafe(BUFFER_BYTES);

/** Held directories: path (no trailing slash) → descriptor. */
const held = new Map<string, number>();

/** Holds `dir` open for the calls below on paths under it; false if it cannot (they then use its path). */
export function holdCgroupDir(dir: string): boolean {
  const l = lib();
  if (!l || held.has(dir)) return held.has(dir);
  const fd = l.openat(-100 /* AT_FDCWD */, cString(dir), O_PATH | constants.O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  held.set(dir, fd);
  return true;
}

/** Lets `dir` go (the agent removes its cgroups). */
export function releaseCgroupDir(dir: string): void {
  const fd = held.get(dir);
  held.delete(dir);
  if (fd !== undefined) lib()?.close(fd);
}

/** The held directory `path` is under, and `path` relative to it; undefined if none is held. */
function under(path: string): { fd: number; rel: Uint8Array; l: Libc } | undefined {
  const l = libc;
  if (!l || held.size === 0) return undefined;
  for (const [dir, fd] of held) if (path.length > dir.length + 1 && path.startsWith(dir) && path.charCodeAt(dir.length) === 47 /* / */) return { fd, rel: cString(path.slice(dir.length + 1)), l };
  return undefined;
}

/**
 * Writes `value` to a cgroup file (which exists: the kernel makes them): open, one write, close.
 * writeFileSync also asks to create it and truncates it after the write, two more calls into
 * kernfs for each of the ~10 writes a job's cgroups take.
 */
export function writeCgroupFile(path: string, value: string): void {
  const at = under(path);
  if (!at) {
    const fd = openSync(path, constants.O_WRONLY);
    try {
      writeSync(fd, value);
    } finally {
      closeSync(fd);
    }
    return;
  }
  const fd = at.l.openat(at.fd, at.rel, constants.O_WRONLY | O_CLOEXEC, 0);
  if (fd < 0) throw failure(at.l, "open", path);
  const bytes = Buffer.from(value);
  const n = at.l.write(fd, bytes, bytes.length);
  const error = n < 0 ? failure(at.l, "write", path) : undefined;
  at.l.close(fd);
  if (error) throw error;
}

/**
 * A cgroup file of one record (a value, or key-value lines) in one read, as util/kernel-file.ts
 * `readKernelRecord` (whose comment says which files qualify); throws as readFileSync does.
 */
export function readCgroupRecord(path: string): string {
  const at = under(path);
  let n: number;
  if (!at) {
    const fd = openSync(path, constants.O_RDONLY);
    try {
      n = readSync(fd, buffer, 0, BUFFER_BYTES, null);
    } finally {
      closeSync(fd);
    }
  } else {
    const fd = at.l.openat(at.fd, at.rel, constants.O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) throw failure(at.l, "open", path);
    n = Number(at.l.read(fd, buffer, BUFFER_BYTES));
    const error = n < 0 ? failure(at.l, "read", path) : undefined;
    at.l.close(fd);
    if (error) throw error;
  }
  return n < BUFFER_BYTES ? buffer.toString("utf8", 0, n) : readFileSync(path, "utf8");
}

/** mkdir (not recursive): throws as mkdirSync does (EEXIST, ...). */
export function makeCgroup(path: string): void {
  const at = under(path);
  if (!at) return void mkdirSync(path);
  if (at.l.mkdirat(at.fd, at.rel, 0o777) !== 0) throw failure(at.l, "mkdir", path);
}

/** rmdir: throws as rmdirSync does (EBUSY: a task is still in it). */
export function removeCgroup(path: string): void {
  const at = under(path);
  if (!at) return rmdirSync(path);
  if (at.l.unlinkat(at.fd, at.rel, AT_REMOVEDIR) !== 0) throw failure(at.l, "rmdir", path);
}

/** rename within one held directory; throws as renameSync does. */
export function renameCgroup(from: string, to: string): void {
  const a = under(from);
  const b = a && under(to);
  if (!a || !b) return renameSync(from, to);
  if (a.l.renameat(a.fd, a.rel, b.fd, b.rel) !== 0) throw failure(a.l, "rename", from);
}
