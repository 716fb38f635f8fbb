/**
 * Binding a process to CPUs from its first instruction: the agent's thread sets its own affinity
 * (sched_setaffinity) around the spawn, so the child inherits it through setpriv, the shell and
 * its program, then the thread takes its own back. No program in the job's argv (taskset) and
 * nothing for the user to get wrong; a job's cgroup cpuset, where there is one, bounds it too.
 */
import { FFIType, ptr } from "bun:ffi";
import { libcSymbols } from "../../util/libc.ts";
import { existsSync, readdirSync } from "node:fs";
import { logger } from "../../util/log.ts";

const log = logger("agent");

/** Bits in the masks (CPU ids 0..8191). */
const MASK_BYTES = 1024;

type Libc = { sched_setaffinity(pid: number, size: number, mask: unknown): number; sched_getaffinity(pid: number, size: number, mask: unknown): number };
let libc: Libc | null | undefined;

function open(): Libc | null {
  if (libc !== undefined) return libc;
  const symbols = { sched_setaffinity: { args: [FFIType.i32, FFIType.u64, FFIType.ptr], returns: FFIType.i32 }, sched_getaffinity: { args: [FFIType.i32, FFIType.u64, FFIType.ptr], returns: FFIType.i32 } } as const;
  libc = libcSymbols<Libc>(symbols) ?? null;
  if (libc) return libc;
  log.warn("cannot bind processes to cores here (no sched_setaffinity in libc.so.6); ranks run on any core of their job");
  return (libc = null);
}

/** Masks by CPU list, made once each (a node's jobs use few distinct lists): no 1 KiB array filled per spawn. */
const masks = new Map<string, Uint8Array>();
function maskOf(cpus: readonly number[]): Uint8Array {
  const key = cpus.join();
  let mask = masks.get(key);
  if (mask) return mask;
  mask = new Uint8Array(MASK_BYTES);
  for (const cpu of cpus) if (cpu < MASK_BYTES * 8) mask[cpu >> 3]! |= 1 << (cpu & 7);
  if (masks.size >= 1024) masks.clear();
  masks.set(key, mask);
  return mask;
}

/**
 * Binds every thread of a running process to `cpus` (a warm rank the agent hands a rank to:
 * threads it starts later inherit its main thread's mask). Nothing without them.
 */
export function bindThreads(pid: number, cpus: readonly number[] | undefined): void {
  const lib = cpus && cpus.length > 0 ? open() : null;
  if (!lib || !cpus) return;
  const mask = maskOf(cpus);
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    // A thread that ended since the listing has nothing left to bind (the runtime's helper
    // threads come and go); one refused while it lives is an error.
    if (lib.sched_setaffinity(Number(task), MASK_BYTES, ptr(mask)) !== 0 && existsSync(`/proc/${pid}/task/${task}`)) throw new Error(`cannot bind thread ${task} of process ${pid} to CPUs ${cpus.join(",")}`);
  }
}

/** Runs `spawn` with the calling thread bound to `cpus` (CPU ids), so that what it starts is; as is without them. */
export function withAffinity<T>(cpus: readonly number[] | undefined, spawn: () => T): T {
  const lib = cpus && cpus.length > 0 ? open() : null;
  if (!lib || !cpus) return spawn();
  const old = new Uint8Array(MASK_BYTES);
  const mask = maskOf(cpus);
  if (lib.sched_getaffinity(0, MASK_BYTES, ptr(old)) !== 0 || lib.sched_setaffinity(0, MASK_BYTES, ptr(mask)) !== 0) return spawn();
  try {
    return spawn();
  } finally {
    lib.sched_setaffinity(0, MASK_BYTES, ptr(old));
  }
}

/** Binds the calling thread to `cpus` (nothing without them); false if the kernel refused. The caller restores its mask (keepingAffinity). */
export function bindOwnThread(cpus: readonly number[] | undefined): boolean {
  const lib = cpus && cpus.length > 0 ? open() : null;
  if (!lib || !cpus) return true;
  return lib.sched_setaffinity(0, MASK_BYTES, ptr(maskOf(cpus))) === 0;
}

/**
 * Runs `fn` and gives the calling thread its CPU mask back afterwards, whatever `fn` did to it
 * (a thread that joins a v1 cpuset and leaves it gets that cpuset's CPUs, not its own mask).
 */
export function keepingAffinity<T>(fn: () => T): T {
  const lib = open();
  const old = new Uint8Array(MASK_BYTES);
  if (!lib || lib.sched_getaffinity(0, MASK_BYTES, ptr(old)) !== 0) return fn();
  try {
    return fn();
  } finally {
    lib.sched_setaffinity(0, MASK_BYTES, ptr(old));
  }
}

/**
 * Each of `count` local ranks' CPUs when bound to cores (`--cpu-bind cores`): the job's CPUs split
 * into contiguous slices, as even as they go. With more ranks than CPUs every rank gets all of
 * them, as Open MPI binds nothing when oversubscribed: MPICH's ranks busy-poll, and two pinned to
 * one CPU never run at once, so each message between them waits for the scheduler to switch
 * (MPICH's rma/atomic_get, 3 ranks on 2 CPUs pinned 0,1,0: 18-20 s under Hydra with taskset as
 * under ebb, 6-13 s unpinned). Such ranks run one OpenMP thread each (crowded-ranks.ts).
 */
export function rankSlices(cpus: readonly number[], count: number): number[][] {
  if (count <= 0 || cpus.length === 0 || count > cpus.length) return Array.from({ length: Math.max(0, count) }, () => [...cpus]);
  if (count === cpus.length) return cpus.map((cpu) => [cpu]);
  const out: number[][] = [];
  for (let i = 0, at = 0; i < count; i++) {
    const size = Math.floor(cpus.length / count) + (i < cpus.length % count ? 1 : 0);
    out.push(cpus.slice(at, at + size));
    at += size;
  }
  return out;
}

/**
 * Ranks' CPUs on a node whose CPUs other nodes share (placement.ts ownsCpus): a step whose ranks
 * fit the CPUs binds world rank r to the r-th, so its ranks on the host's several nodes never meet
 * on a CPU (2 ranks on 2 nodes of `ebb up`, MPICH's errhan/commcall_oldapi at load 30: 4.5 s each
 * on its own CPU, 7.0 unbound); a wider one binds none, as ranks that outnumber their CPUs.
 */
export function sharedRankCpus(cpus: readonly number[], worldRanks: readonly number[], worldSize: number): number[][] | undefined {
  if (worldSize > cpus.length || cpus.length === 0) return undefined;
  return worldRanks.map((r) => [cpus[r % cpus.length]!]);
}
