/**
 * The agent of `ebb agent`, on a thread of its own (a Worker), as `ebb up`'s are (up-agents.ts).
 * Off the process's main thread, the agent starts each rank inside its job's cgroup v1 hierarchies
 * by stepping into them around the spawn (containment.ts `fromInside`), not through a shell that
 * joins them first. The main thread (agent.ts) reads the flags, waits for a signal and asks this
 * thread to stop.
 *
 * The compiled binary carries this file as an entrypoint (see the build script).
 */
import { startAgent, type AgentHandle, type AgentOptions } from "../roles/agent/index.ts";
import { startupPolicy } from "../util/jit.ts";
import { setLogFormat, type LogFormat } from "../util/log.ts";

export type ToAgentWorker = { t: "start"; agent: Omit<AgentOptions, "onFatal" | "peers">; logFormat: LogFormat } | { t: "stop" };
/** `failed`: the start or stop failed (the error's code and syscall, for agent.ts to explain); `fatal`: the controller refused the agent for good. */
export type FromAgentWorker = { t: "started" } | { t: "stopped" } | { t: "failed"; message: string; code?: string; syscall?: string } | { t: "fatal"; message: string };

declare const self: Worker;
startupPolicy();
let agent: AgentHandle | undefined;

const reply = (m: FromAgentWorker) => self.postMessage(m);

self.onmessage = async ({ data: m }: MessageEvent<ToAgentWorker>) => {
  try {
    if (m.t === "start") {
      setLogFormat(m.logFormat);
      agent = await startAgent({ ...m.agent, onFatal: (message) => reply({ t: "fatal", message }) });
      reply({ t: "started" });
    } else {
      await agent?.stop();
      reply({ t: "stopped" });
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    reply({ t: "failed", message: err.message, code: err.code, syscall: err.syscall });
  }
};
