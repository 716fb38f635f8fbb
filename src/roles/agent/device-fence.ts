/**
 * Keeping a job's processes off the GPUs it does not hold, as Slurm's ConstrainDevices does: a
 * BPF_PROG_TYPE_CGROUP_DEVICE program on the job's cgroup v2 refuses the device files of the
 * node's other GPUs (open and mknod, EPERM) and lets every other device through. The kernel runs it
 * for every process of the cgroup, root's included, and only CAP_SYS_ADMIN can take it off; the
 * variables that name a job's GPUs (CUDA_VISIBLE_DEVICES) are then a choice among its own, not the
 * fence. Attached with BPF_F_ALLOW_MULTI: programs of the cgroups above (systemd's) still apply.
 *
 * The program, for bpf_cgroup_dev_ctx {u32 access_type (device type in the low 16 bits); u32
 * major; u32 minor}: r2 = type, r4 = major, r5 = minor; for each refused device, three compares
 * that jump past a "return 0"; at the end "return 1".
 */
import { FFIType, ptr, read } from "bun:ffi";
import { libcSymbols } from "../../util/libc.ts";
import { closeSync, openSync, statSync } from "node:fs";

/** A device file's kind and numbers, as the kernel matches them. */
export interface Device {
  kind: "c" | "b";
  major: number;
  minor: number;
}

/** The device file at `path`; an error message when it is none. */
export function deviceOf(path: string): Device | { error: string } {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    return { error: `${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
  if (!st.isCharacterDevice() && !st.isBlockDevice()) return { error: `${path} is not a device file` };
  // Linux's dev_t: major in bits 8-19 and 32-43, minor in bits 0-7 and 20-31.
  const rdev = BigInt(st.rdev);
  const major = Number(((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn));
  const minor = Number((rdev & 0xffn) | ((rdev >> 12n) & ~0xffn));
  return { kind: st.isCharacterDevice() ? "c" : "b", major, minor };
}

const BPF_DEVCG_DEV_BLOCK = 1;
const BPF_DEVCG_DEV_CHAR = 2;

/** One bpf_insn: opcode, dst and src registers, offset, immediate. */
function insn(out: DataView, at: number, code: number, dst: number, src: number, off: number, imm: number): void {
  out.setUint8(at * 8, code);
  out.setUint8(at * 8 + 1, (src << 4) | dst);
  out.setInt16(at * 8 + 2, off, true);
  out.setInt32(at * 8 + 4, imm, true);
}

const LDX_W = 0x61; // BPF_LDX | BPF_W | BPF_MEM
const AND_K = 0x57; // BPF_ALU64 | BPF_AND | BPF_K
const JNE_K = 0x55; // BPF_JMP | BPF_JNE | BPF_K
const MOV_K = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
const EXIT = 0x95; // BPF_JMP | BPF_EXIT

/** The program's instructions: refuse each of `deny`, allow the rest. */
export function denyProgram(deny: readonly Device[]): Uint8Array {
  const count = 4 + deny.length * 5 + 2;
  const bytes = new Uint8Array(count * 8);
  const out = new DataView(bytes.buffer);
  let i = 0;
  insn(out, i++, LDX_W, 2, 1, 0, 0);
  insn(out, i++, AND_K, 2, 0, 0, 0xffff);
  insn(out, i++, LDX_W, 4, 1, 4, 0);
  insn(out, i++, LDX_W, 5, 1, 8, 0);
  for (const d of deny) {
    insn(out, i++, JNE_K, 2, 0, 4, d.kind === "c" ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
    insn(out, i++, JNE_K, 4, 0, 3, d.major);
    insn(out, i++, JNE_K, 5, 0, 2, d.minor);
    insn(out, i++, MOV_K, 0, 0, 0, 0);
    insn(out, i++, EXIT, 0, 0, 0, 0);
  }
  insn(out, i++, MOV_K, 0, 0, 0, 1);
  insn(out, i++, EXIT, 0, 0, 0, 0);
  return bytes;
}

const BPF_PROG_LOAD = 5;
const BPF_PROG_ATTACH = 8;
const BPF_PROG_DETACH = 9;
const BPF_PROG_TYPE_CGROUP_DEVICE = 15;
const BPF_CGROUP_DEVICE = 6;
const BPF_F_ALLOW_MULTI = 2;
/** bpf_attr's size as passed: larger than any of its members used here, the rest zero. */
const ATTR_BYTES = 128;
const SYS_BPF: Partial<Record<string, number>> = { x64: 321, arm64: 280 };
const LICENSE = new TextEncoder().encode("MIT\0");

type Libc = { syscall(nr: number, cmd: number, attr: unknown, size: number): number | bigint; __errno_location(): unknown };
let libc: Libc | null | undefined;

function open(): Libc | null {
  if (libc !== undefined) return libc;
  const symbols = { syscall: { args: [FFIType.i64, FFIType.i64, FFIType.ptr, FFIType.u32], returns: FFIType.i64 }, __errno_location: { args: [], returns: FFIType.ptr } } as const;
  return (libc = libcSymbols<Libc>(symbols) ?? null);
}

const ERRNO: Record<number, string> = { 1: "EPERM", 7: "E2BIG", 9: "EBADF", 13: "EACCES", 14: "EFAULT", 22: "EINVAL", 38: "ENOSYS" };

/** bpf(cmd, attr): the result, or a thrown error naming errno. */
function bpf(lib: Libc, nr: number, cmd: number, attr: Uint8Array, what: string): number {
  const r = Number(lib.syscall(nr, cmd, ptr(attr), ATTR_BYTES));
  if (r >= 0) return r;
  const errno = read.i32(lib.__errno_location() as number, 0);
  throw new Error(`${what}: ${ERRNO[errno] ?? `errno ${errno}`}`);
}

/** A device program attached to one cgroup. */
export class DeviceFence {
  private constructor(
    private readonly lib: Libc,
    private readonly nr: number,
    private readonly cgroupFd: number,
    private progFd: number,
  ) {}

  /** Fences `cgroup` (a cgroup v2 directory) off `deny`; throws saying why the kernel refused. */
  static attach(cgroup: string, deny: readonly Device[]): DeviceFence {
    const lib = open();
    const nr = SYS_BPF[process.arch];
    if (!lib || nr === undefined) throw new Error(`no bpf() here (${process.arch}, libc ${lib ? "found" : "not found"})`);
    const cgroupFd = openSync(cgroup, "r");
    try {
      const fence = new DeviceFence(lib, nr, cgroupFd, -1);
      fence.progFd = fence.load(deny);
      fence.attachProg(fence.progFd);
      return fence;
    } catch (e) {
      closeSync(cgroupFd);
      throw e;
    }
  }

  /** Fences the cgroup off `deny` instead: the new program first, then the old one off, so no moment is unfenced. */
  replace(deny: readonly Device[]): void {
    const next = this.load(deny);
    try {
      this.attachProg(next);
    } catch (e) {
      closeSync(next);
      throw e;
    }
    const old = this.progFd;
    this.progFd = next;
    this.detach(old);
  }

  /** Lets the program go with its cgroup (removing the cgroup detaches it). */
  close(): void {
    closeSync(this.progFd);
    closeSync(this.cgroupFd);
  }

  private load(deny: readonly Device[]): number {
    const insns = denyProgram(deny);
    const attr = new Uint8Array(ATTR_BYTES);
    const v = new DataView(attr.buffer);
    v.setUint32(0, BPF_PROG_TYPE_CGROUP_DEVICE, true);
    v.setUint32(4, insns.length / 8, true);
    v.setBigUint64(8, BigInt(ptr(insns)), true);
    v.setBigUint64(16, BigInt(ptr(LICENSE)), true);
    return bpf(this.lib, this.nr, BPF_PROG_LOAD, attr, "loading the device program");
  }

  private attachProg(progFd: number): void {
    bpf(this.lib, this.nr, BPF_PROG_ATTACH, this.attr(progFd, BPF_F_ALLOW_MULTI), "attaching the device program");
  }

  private detach(progFd: number): void {
    try {
      bpf(this.lib, this.nr, BPF_PROG_DETACH, this.attr(progFd, 0), "detaching the device program");
    } finally {
      closeSync(progFd);
    }
  }

  private attr(progFd: number, flags: number): Uint8Array {
    const attr = new Uint8Array(ATTR_BYTES);
    const v = new DataView(attr.buffer);
    v.setUint32(0, this.cgroupFd, true);
    v.setUint32(4, progFd, true);
    v.setUint32(8, BPF_CGROUP_DEVICE, true);
    v.setUint32(12, flags, true);
    return attr;
  }
}
