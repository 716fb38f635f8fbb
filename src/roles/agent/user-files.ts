/**
 * Files a job's user controls, read and removed by the agent without leaving the file system of
 * the directory they are in (`base`, the agent's own: the node's shared memory, the runtime
 * directory). Their names are hers to replace: with a symlink, a FIFO, or a mount of hers (an
 * `allow_other` FUSE mount on a directory or file she owns, whose daemon need never answer). So
 * every path below `base` is resolved by openat2 with RESOLVE_NO_XDEV (a mount is refused, EXDEV,
 * before the file system beyond it is asked anything), RESOLVE_NO_SYMLINKS and RESOLVE_BENEATH,
 * and a name is removed by unlinkat, which never enters what is mounted on it (EBUSY): unfixed, the
 * agent's thread read her CFG tables and removed her step's files through her mount and waited
 * there, and the node went DOWN (test/e2e/user-attacks-agent-thread.test.ts).
 */
import { FFIType, read } from "bun:ffi";
import { closeSync, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { getSystemErrorName } from "node:util";
import { libcSymbols } from "../../util/libc.ts";

type Libc = {
  syscall(n: number, dirfd: number, path: Uint8Array, how: BigUint64Array, size: number): number | bigint;
  unlinkat(dirfd: number, path: Uint8Array, flags: number): number;
  __errno_location(): number;
};

/** The generic syscall number of openat2, the same on x86_64 and arm64. */
const SYS_OPENAT2 = 437;
const RESOLVE_NO_XDEV = 0x01;
const RESOLVE_NO_SYMLINKS = 0x04;
const RESOLVE_BENEATH = 0x08;
const O_RDONLY = 0;
const O_NONBLOCK = 0o4000;
const O_DIRECTORY = 0o200000;
const O_NOFOLLOW = 0o400000;
const O_CLOEXEC = 0o2000000;
const O_PATH = 0o10000000;
const AT_REMOVEDIR = 0x200;

let libc: Libc | undefined;
function lib(): Libc {
  if (libc) return libc;
  const { i32, i64, u64, ptr: p } = FFIType;
  libc = libcSymbols<Libc>({
    syscall: { args: [i64, i32, p, p, u64], returns: i64 },
    unlinkat: { args: [i32, p, i32], returns: i32 },
    __errno_location: { args: [], returns: p },
  });
  if (!libc) throw new Error("no C library to open a job's files beneath the agent's directory with");
  return libc;
}

const cString = (s: string) => Buffer.from(`${s}\0`);
const errno = (c: Libc): number => read.i32(c.__errno_location() as never, 0);
function errnoError(code: number, path: string, what: string): NodeJS.ErrnoException {
  const name = getSystemErrorName(-code);
  const why = name === "EXDEV" ? "is on another file system (a mount there)" : name === "ELOOP" ? "is a symbolic link, or has one on its way" : name;
  return Object.assign(new Error(`${path} ${why}`), { code: name, errno: -code, syscall: what, path });
}

/** The agent's own directories, held open (O_PATH) for the agent's life: a few, named by its configuration. */
const bases = new Map<string, number>();
function baseFd(base: string): number {
  let fd = bases.get(base);
  if (fd === undefined) bases.set(base, (fd = openSync(base, O_PATH | O_DIRECTORY | O_CLOEXEC)));
  return fd;
}

/** `rel` below `base` opened with `flags`, never leaving base's file system or following a link; throws naming the path (ENOENT, EXDEV, ELOOP, ...). */
function openBeneath(base: string, rel: string, flags: number): number {
  const c = lib();
  const how = new BigUint64Array([BigInt(flags | O_CLOEXEC), 0n, BigInt(RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)]);
  const fd = Number(c.syscall(SYS_OPENAT2, baseFd(base), cString(rel), how, how.byteLength));
  if (fd < 0) throw errnoError(errno(c), join(base, rel), "openat2");
  return fd;
}

/**
 * The text of `rel` below `base` if it is a regular file of at most `maxBytes` (else an EFBIG error
 * naming the cap, `capName`), undefined if it does not exist. Not a symlink, not beyond a mount,
 * and never blocking: a FIFO planted in its place is refused instead of stalling the agent.
 */
export function readRegularFile(base: string, rel: string, maxBytes: number, capName: string): string | undefined {
  let fd: number;
  try {
    fd = openBeneath(base, rel, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  const path = join(base, rel);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" });
    if (st.size > maxBytes) throw Object.assign(new Error(`${path} is ${st.size} bytes, over the ${maxBytes} the agent reads (${capName})`), { code: "EFBIG" });
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.toString("utf8", 0, got);
  } finally {
    closeSync(fd);
  }
}

/** The owner of `name` in `base` (a link's own), looked at without entering what is mounted there; throws when it is a mount (EXDEV) or gone. */
export function ownerBeneath(base: string, name: string): { uid: number; gid: number } {
  const fd = openBeneath(base, name, O_PATH | O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    return { uid: st.uid, gid: st.gid };
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes `name` (one name) in `base`: a file, or a directory with the files in it. What is mounted
 * there, or a directory in it, is left (EBUSY, ENOTEMPTY: thrown), never entered; gone already is done.
 */
export function removeBeneath(base: string, name: string): void {
  const c = lib();
  const dir = baseFd(base);
  const at = cString(name);
  if (c.unlinkat(dir, at, 0) === 0) return;
  let e = errno(c);
  if (getSystemErrorName(-e) === "ENOENT") return;
  if (getSystemErrorName(-e) === "EISDIR") {
    if (c.unlinkat(dir, at, AT_REMOVEDIR) === 0) return;
    e = errno(c);
    if (getSystemErrorName(-e) === "ENOTEMPTY") {
      // Its names listed through the descriptor (the directory itself, not what may be mounted on it since), each unlinked in it.
      const fd = openBeneath(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      try {
        for (const entry of readdirSync(`/proc/self/fd/${fd}`)) c.unlinkat(fd, cString(entry), 0);
      } finally {
        closeSync(fd);
      }
      if (c.unlinkat(dir, at, AT_REMOVEDIR) === 0) return;
      e = errno(c);
    }
  }
  throw errnoError(e, join(base, name), "unlinkat");
}
