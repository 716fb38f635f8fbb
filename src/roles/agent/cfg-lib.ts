/**
 * The CFG interposition library for MPI programs (src/cfg/c/ebbcfg.c): compiled with the node's
 * `mpicc` at first need, cached under the state dir by a hash of the source and of `mpicc -show`
 * (so a changed source or MPI rebuilds it), and added with LD_PRELOAD to ranks whose executable
 * links an MPI library (as the user's look-up says, path-probe.ts: the agent reads no program of hers). Without `mpicc` such steps run unmonitored, and the reason is reported.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import source from "../../cfg/c/ebbcfg.c" with { type: "text" };
import { cachedDir, compile, compilerIdentity } from "../c-build.ts";

export type CfgLib = { path: string } | { reason: string };

let built: Promise<CfgLib> | undefined;

async function build(stateDir: string, node: string): Promise<CfgLib> {
  const mpicc = Bun.which("mpicc");
  if (!mpicc) return { reason: `mpicc not found on ${node} (PATH=${process.env.PATH ?? ""}); MPI steps run unmonitored` };
  const show = await compilerIdentity(mpicc);
  try {
    const dir = await cachedDir(join(stateDir, "cfg"), "libebbcfg", `${source}\0${show}`, async (tmp) => {
      writeFileSync(join(tmp, "ebbcfg.c"), source);
      await compile([mpicc, "-O2", "-shared", "-fPIC", "-o", "libebbcfg.so", "ebbcfg.c", "-ldl"], tmp);
    });
    return { path: join(dir, "libebbcfg.so") };
  } catch (e) {
    return { reason: `mpicc could not build the CFG library on ${node}: ${(e as Error).message.slice(0, 500)}` };
  }
}

/** The library's path on this node, or why there is none (built once per agent). */
export function cfgLibrary(stateDir: string, node: string): Promise<CfgLib> {
  built ??= build(stateDir, node).catch((e) => ({ reason: `building the CFG library failed on ${node}: ${(e as Error).message}` }));
  return built;
}
