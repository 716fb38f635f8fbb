/**
 * Profiling aid (not a bench): N agents on this process's main thread, as `ebb up` runs them on its
 * agent thread, against a controller started separately; run it under `bun --cpu-prof-md` to see
 * the agents' side of a wide launch (Bun does not profile Worker threads).
 *   bun --cpu-prof-md bench/_profile-agents.ts N CONTROLLER_URL STATE_DIR SECONDS
 */
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { startAgent } from "../src/roles/agent/index.ts";
import { PeerPool } from "../src/tbon/pool.ts";

const [n, url, stateDir, seconds] = [Number(process.argv[2]), process.argv[3]!, process.argv[4]!, Number(process.argv[5])];
const clusterKey = readFileSync(join(stateDir, "cluster.key"), "utf8").trim();
const peers = new PeerPool();
const width = Math.max(2, String(n).length);
const agents = await Promise.all(
  Array.from({ length: n }, (_, i) => `node${String(i + 1).padStart(width, "0")}`).map((name) =>
    startAgent({ controller: url, clusterKey, name, cpus: 2, memoryMb: 64, listen: { host: "127.0.0.1", port: 0 }, stateDir: join(stateDir, "agents", name), peers }),
  ),
);
console.log("agents up");
await Bun.sleep(seconds * 1000);
await Promise.all(agents.map((a) => a.stop()));
peers.close();
process.exit(0);
