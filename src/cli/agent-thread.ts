/**
 * The agents of `ebb agent` (one) and `ebb up` (one per node; on several such threads with
 * --agent-threads, agent-threads.ts), on a thread of their own (a Worker); agent-worker.ts is the
 * main thread's side. Off the process's main thread:
 * - an agent starts each rank inside its job's cgroup v1 hierarchies by stepping into them around
 *   the spawn (containment.ts `fromInside`), not through a shell that joins them first;
 * - starting a rank holds the thread until the child has exec'd (Bun spawns with vfork), which on
 *   `ebb up`'s controller thread stalled scheduling and the API (~15 % fewer jobs/s).
 * Several agents here share one PeerPool (a launch passes from agent to agent in-process) and one
 * sentinel per thread (they die with this process together; a pipe and a process descriptor per
 * agent were copied into, and closed in, every rank spawned). With a controller in this process (`ebb up`),
 * their links to it share one MessagePort (proto/port-link.ts) instead of a loopback socket pair each.
 *
 * The compiled binary carries this file as an entrypoint (see the build script).
 */
import { dirname } from "node:path";
import { startAgent, type AgentHandle, type AgentOptions } from "../roles/agent/index.ts";
import { Sentinel } from "../roles/agent/sentinel.ts";
import { PeerPool } from "../tbon/pool.ts";
import { PortLinks } from "../proto/port-link.ts";
import { startupPolicy } from "../util/jit.ts";
import { setLogFormat, type LogFormat } from "../util/log.ts";

export type AgentThreadOptions = Omit<AgentOptions, "onFatal" | "peers" | "sentinel" | "link">;
/** `controller`: the in-process controller's end of the agents' links (absent: each agent opens a WebSocket). */
export type ToAgentThread = { t: "start"; agents: AgentThreadOptions[]; logFormat: LogFormat; controller?: MessagePort } | { t: "stop" };
/** `failed`: the start or stop failed (the error's code and syscall, to explain it); `fatal`: the controller refused an agent for good. */
export type FromAgentThread = { t: "started" } | { t: "stopped" } | { t: "failed"; message: string; code?: string; syscall?: string } | { t: "fatal"; message: string };

declare const self: Worker;
startupPolicy();
let agents: AgentHandle[] = [];
let peers: PeerPool | undefined;
let links: PortLinks | undefined;

const reply = (m: FromAgentThread) => self.postMessage(m);

async function start(all: AgentThreadOptions[], controller: MessagePort | undefined): Promise<AgentHandle[]> {
  const onFatal = (message: string) => reply({ t: "fatal", message });
  const shared = (links = controller && new PortLinks(controller));
  const link = shared && ((o: Parameters<PortLinks["connect"]>[0]) => shared.connect(o));
  // `ebb agent`'s one agent, alone in its process; `ebb up`'s (linked in-process), even one on a thread, share with the others.
  if (all.length === 1 && !controller) return [await startAgent({ ...all[0]!, onFatal })];
  const pool = (peers = new PeerPool(all[0]?.ca));
  const sentinel = new Sentinel(dirname(all[0]!.stateDir));
  return Promise.all(
    all.map((o) => startAgent({ ...o, onFatal, peers: pool, sentinel, link }).catch((e: NodeJS.ErrnoException) => Promise.reject(Object.assign(new Error(`agent ${o.name}: ${e.message}`), { code: e.code, syscall: e.syscall })))),
  );
}

self.onmessage = async ({ data: m }: MessageEvent<ToAgentThread>) => {
  try {
    if (m.t === "start") {
      setLogFormat(m.logFormat);
      agents = await start(m.agents, m.controller);
      reply({ t: "started" });
    } else {
      await Promise.all(agents.map((a) => a.stop()));
      peers?.close();
      links?.close();
      reply({ t: "stopped" });
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    reply({ t: "failed", message: err.message, code: err.code, syscall: err.syscall });
  }
};
