/**
 * The calling thread's effective ids and supplementary groups, switched by the raw system calls.
 * Linux keeps credentials per thread; glibc's seteuid, setegid and setgroups (and Bun's
 * process.seteuid & co., which call them) apply the change to every thread of the process
 * (POSIX asks it), so with several agent threads in one process (`ebb up --agent-threads`) one
 * thread's open as user A ran with user B's ids while another switched. `syscall(2)` is not
 * wrapped that way: only the caller changes. What needs the ids (the open of a file) runs on the
 * same thread, synchronously, between the switch and the switch back.
 *
 * A thread that the switched thread starts meanwhile is born with its ids and keeps them (checked:
 * JavaScriptCore's JIT worker and warm-up threads, started lazily). What runs inside a switch is a
 * synchronous open, stat or remove, which queues nothing to Bun's I/O pool, so the threads that
 * start then are the engine's, which do no file work of ebb's. Such a thread has less than root's
 * rights, never more (its real and saved ids stay root's: the user
 * can neither signal nor trace it). glibc's seteuid & co. must not be used in the same process
 * after it: they check that every thread's switch succeeded and abort (checked).
 */
import { FFIType, ptr, read } from "bun:ffi";
import { libcSymbols } from "../util/libc.ts";

/** The syscall numbers, by architecture (asm/unistd_64.h; asm-generic for arm64). */
const NUMBERS: Record<string, { setgroups: number; setresuid: number; setresgid: number }> = {
  x64: { setgroups: 116, setresuid: 117, setresgid: 119 },
  arm64: { setgroups: 159, setresuid: 147, setresgid: 149 },
};

/** "Leave this id as it is" for setresuid/setresgid ((uid_t)-1). */
const KEEP = -1;

type Libc = { syscall(n: number, a: number | bigint, b: number | bigint, c: number | bigint): number; __errno_location(): number };
let libc: Libc | undefined;

function open(): Libc {
  if (libc) return libc;
  const symbols = {
    syscall: { args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64], returns: FFIType.i64_fast },
    __errno_location: { args: [], returns: FFIType.ptr },
  } as const;
  libc = libcSymbols<Libc>(symbols);
  if (libc) return libc;
  throw new Error("cannot switch a thread's user ids: no syscall() in libc.so.6");
}

function numbers() {
  const n = NUMBERS[process.arch];
  if (!n) throw new Error(`cannot switch a thread's user ids on ${process.arch} (known: ${Object.keys(NUMBERS).join(", ")})`);
  return n;
}

function check(what: string, result: number): void {
  if (Number(result) === 0) return;
  const errno = read.i32(open().__errno_location() as never, 0);
  throw Object.assign(new Error(`${what} failed (errno ${errno})`), { errno, syscall: what });
}

/** The calling thread's supplementary groups become `groups`. */
export function setThreadGroups(groups: readonly number[]): void {
  const list = new Uint32Array(Math.max(1, groups.length));
  list.set(groups);
  check("setgroups", open().syscall(numbers().setgroups, groups.length, ptr(list), 0));
}

/** The calling thread's effective gid becomes `gid` (real and saved kept). */
export function setThreadEgid(gid: number): void {
  check("setresgid", open().syscall(numbers().setresgid, KEEP, gid, KEEP));
}

/** The calling thread's effective uid becomes `uid` (real and saved kept: a root thread can come back). */
export function setThreadEuid(uid: number): void {
  check("setresuid", open().syscall(numbers().setresuid, KEEP, uid, KEEP));
}
