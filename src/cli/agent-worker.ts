/**
 * The main thread's side of the agents' thread (agent-thread.ts): one request at a time. A start
 * that fails rejects with the error's code and syscall (so that `starting` can explain it); a
 * controller's refusal of an agent, or an error that escapes the thread between requests, calls
 * `fatal`.
 */
import type { LogFormat } from "../util/log.ts";
import { isCompiled } from "../util/self.ts";
import type { AgentThreadOptions, FromAgentThread, ToAgentThread } from "./agent-thread.ts";

export class AgentWorker {
  // A compiled binary finds its extra entrypoints by their path under src/; from source, by URL.
  private readonly worker = new Worker(isCompiled() ? "./cli/agent-thread.ts" : new URL("./agent-thread.ts", import.meta.url).href);
  private pending: { resolve(): void; reject(e: Error): void } | undefined;

  private constructor(fatal: (message: string) => void) {
    this.worker.onmessage = ({ data }: MessageEvent<FromAgentThread>) => {
      if (data.t === "fatal") return fatal(data.message);
      const p = this.pending;
      this.pending = undefined;
      if (data.t === "failed") p?.reject(Object.assign(new Error(data.message), { code: data.code, syscall: data.syscall }));
      else p?.resolve();
    };
    this.worker.onerror = (e) => {
      const why = `the agents' thread failed: ${e.message.trim()}`;
      if (this.pending) this.pending.reject(new Error(why));
      else fatal(why);
      this.pending = undefined;
    };
  }

  /** `controller`: the agents' end of links to a controller in this process (moved to the thread). */
  static async start(agents: AgentThreadOptions[], logFormat: LogFormat, fatal: (message: string) => void, controller?: MessagePort): Promise<AgentWorker> {
    const w = new AgentWorker(fatal);
    try {
      await w.call({ t: "start", agents, logFormat, controller }, controller ? [controller] : []);
    } catch (e) {
      w.worker.terminate();
      throw e;
    }
    return w;
  }

  private call(request: ToAgentThread, transfer: Transferable[] = []): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(request, transfer);
    });
  }

  async stop(): Promise<void> {
    try {
      await this.call({ t: "stop" });
    } finally {
      this.worker.terminate();
    }
  }
}
