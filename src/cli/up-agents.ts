/**
 * The agents of `ebb up`, on a thread of their own (a Worker). Starting a rank holds the thread
 * that starts it until the child has exec'd (Bun spawns with vfork); on the controller's thread
 * every rank started would stall scheduling and the API. With 1,000 one-rank jobs on 4 nodes,
 * `ebb up` ran ~15% more jobs/s with its agents here. The agents share one PeerPool: a launch
 * passes from agent to agent in-process (AgentOptions.peers); and one sentinel (AgentOptions.sentinel).
 *
 * The compiled binary carries this file as a second entrypoint (see the build script).
 */
import { startAgent, type AgentHandle, type AgentOptions } from "../roles/agent/index.ts";
import { startupPolicy } from "../util/jit.ts";
import { PeerPool } from "../tbon/pool.ts";
import { Sentinel } from "../roles/agent/sentinel.ts";
import { setLogFormat, type LogFormat } from "../util/log.ts";

export type ToAgentThread = { t: "start"; agents: Omit<AgentOptions, "peers" | "sentinel">[]; logFormat?: LogFormat } | { t: "stop" };
export type FromAgentThread = { t: "started" } | { t: "stopped" } | { t: "failed"; message: string };

declare const self: Worker;
startupPolicy();
let agents: AgentHandle[] = [];
let peers: PeerPool | undefined;

const reply = (m: FromAgentThread) => self.postMessage(m);

self.onmessage = async ({ data: m }: MessageEvent<ToAgentThread>) => {
  try {
    if (m.t === "start") {
      if (m.logFormat) setLogFormat(m.logFormat);
      const shared = (peers = new PeerPool(m.agents[0]?.ca));
      // One sentinel for all: they die with this process together (its pipe and process descriptor
      // per agent were copied into, and closed in, every rank spawned).
      const sentinel = new Sentinel();
      agents = await Promise.all(m.agents.map((o) => startAgent({ ...o, peers: shared, sentinel }).catch((e: Error) => Promise.reject(new Error(`agent ${o.name}: ${e.message}`)))));
      reply({ t: "started" });
    } else {
      await Promise.all(agents.map((a) => a.stop()));
      peers?.close();
      reply({ t: "stopped" });
    }
  } catch (e) {
    reply({ t: "failed", message: (e as Error).message });
  }
};
