/**
 * How a comm test program gets its world: from the test KVS stand-in when a test launched it
 * directly (EBB_TEST_KVS), or from ebb itself (PMI through the agent) when run by `ebb run`.
 */
import { finalize, finalizeAdapt, initAdapt, initWorld, type Comm } from "../../src/comm/index.ts";
import { testBootstrap } from "./comm-kvs.ts";

export async function startWorld(): Promise<{ world: Comm; done(): Promise<void> }> {
  if (process.env.EBB_TEST_KVS) {
    const boot = await testBootstrap();
    const world = await initWorld(boot);
    return {
      world,
      done: async () => {
        await finalize();
        boot.kvs.close();
      },
    };
  }
  const { world } = await initAdapt();
  return { world, done: finalizeAdapt };
}
