/**
 * Large TCP bodies read straight from the socket into their destination, through bun:ffi.
 *
 * Bun's socket reads at most 512 KiB at a time into a buffer of its own and hands each read to
 * JavaScript as a fresh copy, which the frame parser then copies into the body: a 4 MiB message
 * crosses user memory three times. Here the transport, once a frame's header (and what Bun read
 * with it) is in and a large part of its body is still to come, calls recv(2) on the socket's own
 * fd with the body's memory as the destination: the kernel's copy is the only one. Bun's socket
 * keeps everything else — connecting, writing, the small frames, closes and errors — and since
 * this runs inside its data callback, Bun reads nothing of the socket meanwhile. Protocol and
 * rules: src/comm/README.md ("Large messages over TCP").
 */
import { ffi } from "./lazy.ts";

const MSG_DONTWAIT = 0x40;
const POLLIN = 0x1;
const POLLOUT = 0x4;
const EAGAIN = 11;
const EINTR = 4;
const SOL_SOCKET = 1;
const SO_RCVLOWAT = 18;

export interface DirectReads {
  /**
   * Reads up to `want` bytes into `into` at `at` without blocking: the count read, 0 if nothing is
   * there now, -1 at the end of the stream or on an error (left for the socket's own read to see).
   */
  recv(fd: number, into: Uint8Array, at: number, want: number): number;
  /**
   * Blocks up to `ms` until `fd` is readable or one of `out` is writable: undefined if neither
   * came in time, else which of `out` are writable or broken (indexes into `out`).
   */
  wait(fd: number, out: readonly number[], ms: number): number[] | undefined;
  /**
   * SO_RCVLOWAT: the socket counts as readable (for poll, and so for Bun's own epoll) only once
   * `bytes` are queued, so the kernel wakes the reader once per that much, not once per segment.
   */
  lowWater(fd: number, bytes: number): void;
}

function open(): DirectReads | undefined {
  if (process.platform !== "linux" || process.env.EBB_COMM_DIRECT === "0") return undefined;
  let libc;
  try {
    libc = ffi().dlopen("libc.so.6", {
      recv: { args: ["i32", "ptr", "u64", "i32"], returns: "i64" },
      poll: { args: ["ptr", "u64", "i32"], returns: "i32" },
      setsockopt: { args: ["i32", "i32", "i32", "ptr", "u32"], returns: "i32" },
      __errno_location: { args: [], returns: "ptr" },
    }).symbols;
  } catch {
    return undefined;
  }
  const { ptr, read } = ffi();
  const errnoAt = libc.__errno_location()!;
  let fds = new Int32Array(16);
  const opt = new Int32Array(1);
  return {
    recv(fd, into, at, want) {
      const n = Number(libc.recv(fd, ptr(into, at), want, MSG_DONTWAIT));
      if (n > 0) return n;
      if (n === 0) return -1;
      const e = read.i32(errnoAt, 0);
      return e === EAGAIN || e === EINTR ? 0 : -1;
    },
    wait(fd, out, ms) {
      const n = 1 + out.length;
      if (fds.length < 2 * n) fds = new Int32Array(4 * n);
      // struct pollfd { int fd; short events; short revents; }: events in the low half (little endian)
      fds[0] = fd;
      fds[1] = POLLIN;
      for (let i = 0; i < out.length; i++) {
        fds[2 + 2 * i] = out[i]!;
        fds[3 + 2 * i] = POLLOUT;
      }
      const ready = libc.poll(fds, n, Math.max(0, Math.ceil(ms)));
      if (ready === 0) return undefined;
      if (ready < 0 || out.length === 0) return [];
      const writable: number[] = [];
      for (let i = 0; i < out.length; i++) if (fds[3 + 2 * i]! >>> 16) writable.push(i); // POLLOUT, or an error the write will see
      return writable;
    },
    lowWater(fd, bytes) {
      opt[0] = bytes;
      libc.setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, opt, 4);
    },
  };
}

/** A Bun socket's file descriptor (present at run time, missing from Bun's types), or -1. */
export function fdOf(socket: object): number {
  const fd = (socket as { fd?: unknown }).fd;
  return typeof fd === "number" && fd >= 0 ? fd : -1;
}

let opened: { reads: DirectReads | undefined } | undefined;
/** The direct reads (opened at the first large TCP body), or undefined where bun:ffi or libc is missing or EBB_COMM_DIRECT=0. */
export function directReads(): DirectReads | undefined {
  return (opened ??= { reads: open() }).reads;
}

/** A TCP body with at least this much still to come after a socket read is read directly. */
export const DIRECT_BYTES = Number(process.env.EBB_COMM_DIRECT_BYTES ?? 64 * 1024);
/** How long a direct read waits for more of its body before handing the socket back to Bun, in ms. */
export const DIRECT_WAIT_MS = Number(process.env.EBB_COMM_DIRECT_WAIT_US ?? 2000) / 1000;
/**
 * The low-water mark a direct read waits with (at most the body's rest): one wakeup per this many
 * bytes instead of one per arriving segment, which on a loaded machine costs a run-queue wait each.
 * Not the whole rest: a mark the receive window cannot reach would only be left by the timeout.
 */
export const DIRECT_LOWAT = Number(process.env.EBB_COMM_DIRECT_LOWAT ?? 1 << 20);
