/** The C library's functions through bun:ffi, for the few calls Bun has no API for. */
import { dlopen, type FFIFunction } from "bun:ffi";

/**
 * `symbols` from the C library (glibc's libc.so.6, else a libc.so), as `T`; undefined where neither
 * has them. Callers keep what they get: a dlopen is not free.
 */
export function libcSymbols<T>(symbols: Record<string, FFIFunction>): T | undefined {
  for (const name of ["libc.so.6", "libc.so"])
    try {
      return dlopen(name, symbols).symbols as unknown as T;
    } catch {
      /* the next name */
    }
  return undefined;
}
