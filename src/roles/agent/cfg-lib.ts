/**
 * The CFG interposition library for MPI programs (src/cfg/c/ebbcfg.c): compiled with the node's
 * `mpicc` at first need, cached by a hash of the source and of `mpicc -show` (so a changed source
 * or MPI rebuilds it), and added with LD_PRELOAD to ranks whose executable links an MPI library.
 * Without `mpicc` such steps run unmonitored, and the reason is reported. The ranks' user loads it:
 * a root agent keeps it under /run/ebb/cfg (0755, shared by the host's root agents), not in its
 * state dir, which is root's alone (there, the loader refused it to every user's rank, which said so
 * on its stderr and ran unmonitored); other agents keep it in their state dir, whose owner runs every job.
 */
import { chmodSync, closeSync, constants, fstatSync, mkdirSync, openSync, readSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import source from "../../cfg/c/ebbcfg.c" with { type: "text" };
import { cachedDir, compile, compilerIdentity } from "../c-build.ts";
import { PATH_DIRS_SEARCHED } from "../direct-drop.ts";
import { agentIsRoot } from "../identity.ts";
import { RUN_DIR } from "./ebb-command.ts";

export type CfgLib = { path: string } | { reason: string };

let built: Promise<CfgLib> | undefined;

async function build(stateDir: string, node: string): Promise<CfgLib> {
  const mpicc = Bun.which("mpicc");
  if (!mpicc) return { reason: `mpicc not found on ${node} (PATH=${process.env.PATH ?? ""}); MPI steps run unmonitored` };
  const show = await compilerIdentity(mpicc);
  try {
    const dir = await cachedDir(cacheDir(stateDir), "libebbcfg", `${source}\0${show}`, async (tmp) => {
      writeFileSync(join(tmp, "ebbcfg.c"), source);
      await compile([mpicc, "-O2", "-shared", "-fPIC", "-o", "libebbcfg.so", "ebbcfg.c", "-ldl"], tmp);
      // Whatever the agent's umask: every user's ranks load it.
      chmodSync(tmp, 0o755);
      chmodSync(join(tmp, "libebbcfg.so"), 0o755);
    });
    return { path: join(dir, "libebbcfg.so") };
  } catch (e) {
    return { reason: `mpicc could not build the CFG library on ${node}: ${(e as Error).message.slice(0, 500)}` };
  }
}

function cacheDir(stateDir: string): string {
  if (!agentIsRoot()) return join(stateDir, "cfg");
  const dir = join(RUN_DIR, "cfg");
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(RUN_DIR, 0o755);
  chmodSync(dir, 0o755);
  return dir;
}

/** The library's path on this node, or why there is none (built once per agent). */
export function cfgLibrary(stateDir: string, node: string): Promise<CfgLib> {
  built ??= build(stateDir, node).catch((e) => ({ reason: `building the CFG library failed on ${node}: ${(e as Error).message}` }));
  return built;
}

/** What `linksMpi` found per path, valid while the file's identity, size and time stay. */
const scanned = new Map<string, { stamp: string; mpi: boolean }>();
const SCAN_BYTES = 4 << 20;
const CHUNK = 256 << 10;

/**
 * Whether `executable` is an ELF file naming libmpi in its first 4 MiB (its dynamic section lies
 * there). A bare name is looked up on `PATH`, the job's first PATH_DIRS_SEARCHED directories (a program further down runs unmonitored; the rank's exec searches that one, not the
 * agent's). Remembered per file: reading 4 MiB took ~25 ms per launch on a node, and a step's
 * every agent asks about the same program.
 */
export function linksMpi(executable: string, PATH: string | undefined): boolean {
  const path = executable.includes("/") ? executable : Bun.which(executable, { PATH: (PATH ?? "").split(":", PATH_DIRS_SEARCHED).join(":") });
  if (!path) return false;
  let stamp: string;
  try {
    const st = statSync(path);
    stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return false;
  }
  const known = scanned.get(path);
  if (known?.stamp === stamp) return known.mpi;
  const mpi = scanForMpi(path);
  if (scanned.size >= 256) scanned.clear();
  scanned.set(path, { stamp, mpi });
  return mpi;
}

function scanForMpi(path: string): boolean {
  let fd: number | undefined;
  try {
    // Non-blocking and regular files only: a FIFO named as the program must not stall the agent.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return false;
    const buf = Buffer.allocUnsafe(CHUNK + 16);
    let at = 0;
    let kept = 0; // the last bytes of the previous chunk, so a name across the boundary is found
    for (;;) {
      const n = readSync(fd, buf, kept, CHUNK, at);
      if (at === 0 && (n < 4 || buf[0] !== 0x7f || buf.toString("latin1", 1, 4) !== "ELF")) return false;
      if (n <= 0) return false;
      const end = kept + n;
      if (buf.subarray(0, end).indexOf("libmpi") >= 0) return true;
      at += n;
      if (at >= SCAN_BYTES) return false;
      kept = Math.min(8, end);
      buf.copyWithin(0, end - kept, end);
    }
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
