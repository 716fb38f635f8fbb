/**
 * The CFG interposition library for MPI programs (src/cfg/c/ebbcfg.c): compiled with the node's
 * `mpicc` at first need, cached under the state dir by a hash of the source and of `mpicc -show`
 * (so a changed source or MPI rebuilds it), and added with LD_PRELOAD to ranks whose executable
 * links an MPI library. Without `mpicc` such steps run unmonitored, and the reason is reported.
 */
import { existsSync, mkdirSync, openSync, readSync, closeSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import source from "../../cfg/c/ebbcfg.c" with { type: "text" };

export type CfgLib = { path: string } | { reason: string };

let built: Promise<CfgLib> | undefined;

async function output(argv: string[]): Promise<{ code: number; text: string }> {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, text: (out + err).trim() };
}

async function build(stateDir: string, node: string): Promise<CfgLib> {
  const mpicc = Bun.which("mpicc");
  if (!mpicc) return { reason: `mpicc not found on ${node} (PATH=${process.env.PATH ?? ""}); MPI steps run unmonitored` };
  const show = await output([mpicc, "-show"]);
  const hash = Bun.hash(`${source}\0${show.text}`).toString(16);
  const dir = join(stateDir, "cfg");
  const path = join(dir, `libebbcfg-${hash}.so`);
  if (existsSync(path)) return { path };
  mkdirSync(dir, { recursive: true });
  const src = join(dir, `ebbcfg-${hash}-${process.pid}.c`);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(src, source);
  const cc = await output([mpicc, "-O2", "-shared", "-fPIC", "-o", tmp, src, "-ldl"]);
  rmSync(src, { force: true });
  if (cc.code !== 0) {
    rmSync(tmp, { force: true });
    return { reason: `mpicc could not build the CFG library on ${node}: ${cc.text.slice(0, 500)}` };
  }
  renameSync(tmp, path);
  return { path };
}

/** The library's path on this node, or why there is none (built once per agent). */
export function cfgLibrary(stateDir: string, node: string): Promise<CfgLib> {
  built ??= build(stateDir, node).catch((e) => ({ reason: `building the CFG library failed on ${node}: ${(e as Error).message}` }));
  return built;
}

/** Does the executable link an MPI library? (its dynamic section names libmpi*). */
export function linksMpi(executable: string): boolean {
  const path = executable.includes("/") ? executable : Bun.which(executable);
  if (!path) return false;
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buf = Buffer.alloc(4 << 20);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const head = buf.subarray(0, n);
    if (head[0] !== 0x7f || head.toString("latin1", 1, 4) !== "ELF") return false;
    return head.indexOf("libmpi") >= 0;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
