/**
 * A pipe whose read end a child process gets as one of its descriptors while this process writes
 * the other end asynchronously (Bun's FileSink polls it: a full pipe never blocks the event loop).
 * Both ends are close-on-exec: a child gets the read end only where its spawn puts it.
 */
import { FFIType, ptr } from "bun:ffi";
import { libcSymbols } from "./libc.ts";

const O_CLOEXEC = 0o2000000;

type Libc = { pipe2(fds: number, flags: number): number };
let libc: Libc | undefined;

function open(): Libc {
  if (libc) return libc;
  const symbols = { pipe2: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 } } as const;
  libc = libcSymbols<Libc>(symbols);
  if (libc) return libc;
  throw new Error("cannot make a pipe: no pipe2() in libc.so.6");
}

/** A new pipe's [read, write] descriptors. */
export function pipe(): [number, number] {
  const fds = new Int32Array(2);
  if (open().pipe2(ptr(fds) as unknown as number, O_CLOEXEC) !== 0) throw new Error("cannot make a pipe (pipe2 failed: too many open files?)");
  return [fds[0]!, fds[1]!];
}
