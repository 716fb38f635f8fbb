/**
 * The CFG interposition library for MPI programs (src/cfg/c/ebbcfg.c): compiled with the node's
 * `mpicc` at first need, cached by a hash of the source and of `mpicc -show` (so a changed source
 * or MPI rebuilds it), and added with LD_PRELOAD to ranks whose executable links an MPI library
 * (as the user's look-up says, path-probe.ts: the agent reads no program of hers). Without `mpicc`
 * such steps run unmonitored, and the reason is reported. The ranks' user loads it: a root agent
 * keeps it under /run/ebb/cfg (0755, shared by the host's root agents), not in its state dir, which
 * is root's alone (there, the loader refused it to every user's rank, which said so on its stderr
 * and ran unmonitored); other agents keep it in their state dir, whose owner runs every job.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import source from "../../cfg/c/ebbcfg.c" with { type: "text" };
import { cachedDir, compile, compilerIdentity } from "../c-build.ts";
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
