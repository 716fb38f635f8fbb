/**
 * Starts one agent per host over ssh, in parallel, and stops them: the binary is copied where it is
 * missing or differs, the agent's ssh session stays open for as long as the cluster runs (its
 * stdin is the agent's lifeline), and its stderr is passed on, prefixed with the host.
 */
import type { Subprocess } from "bun";
import type { HostSpec } from "./hosts.ts";
import { agentCommand, copyCommand, NEED_COPY, sshArgv, type SshSettings } from "./ssh.ts";

export interface RemoteOptions {
  ssh: SshSettings;
  /** The ebb binary to run there (this one). */
  binary: string;
  sha256: string;
  remotePath: string;
  controllerPort: number;
  controllerHost?: string;
  clusterKey: string;
  /** CPUs for hosts without slots=N (default: all of each host's). */
  cpus?: number;
  logLevel: string;
  /** A progress line about one host. */
  progress(host: string, line: string): void;
  /** Resolves once the node has registered with the controller. */
  registered(name: string): Promise<void>;
  /** How long an agent may take to register once its ssh session is up. */
  registerTimeoutMs: number;
}

type Piped = Subprocess<"pipe", "ignore", "pipe">;

/** The last lines a process wrote to stderr, passed on as they come (when `echo`). */
class Tail {
  lines: string[] = [];
  /** Resolves when the stream has ended. */
  readonly done: Promise<void>;
  constructor(stream: ReadableStream<Uint8Array>, echo?: (line: string) => void) {
    this.done = (async () => {
      let rest = "";
      const decoder = new TextDecoder();
      for await (const chunk of stream) {
        rest += decoder.decode(chunk, { stream: true });
        const parts = rest.split("\n");
        rest = parts.pop()!;
        for (const l of parts) this.add(l, echo);
      }
      if (rest) this.add(rest, echo);
    })().catch(() => {});
  }
  private add(line: string, echo?: (line: string) => void) {
    if (!line.trim()) return;
    this.lines.push(line);
    if (this.lines.length > 20) this.lines.shift();
    echo?.(line);
  }
  /** What went wrong, as the process said it: its last line. */
  last(): string {
    return this.lines.at(-1)?.trim() ?? "";
  }
}

export class HostFailed extends Error {}

export class RemoteAgents {
  private readonly sessions = new Map<string, Piped>();
  private stopping = false;

  constructor(private readonly o: RemoteOptions) {}

  /** Starts every host in parallel; the names of those that failed, with why. */
  async start(hosts: HostSpec[]): Promise<{ up: string[]; failed: { name: string; why: string }[] }> {
    const results = await Promise.all(
      hosts.map(async (h) => {
        try {
          await this.startHost(h);
          return { name: h.name };
        } catch (e) {
          this.o.progress(h.name, `FAILED: ${(e as Error).message}`);
          return { name: h.name, why: (e as Error).message };
        }
      }),
    );
    return { up: results.filter((r) => r.why === undefined).map((r) => r.name), failed: results.flatMap((r) => (r.why === undefined ? [] : [{ name: r.name, why: r.why }])) };
  }

  private async startHost(h: HostSpec): Promise<void> {
    this.o.progress(h.name, "connecting");
    for (let attempt = 0; ; attempt++) {
      const session = this.launch(h);
      const timer = new Promise<"slow">((resolve) => setTimeout(() => resolve("slow"), this.o.registerTimeoutMs).unref());
      const r = await Promise.race([session.proc.exited, this.o.registered(h.name).then(() => "registered" as const), timer]);
      if (r === "registered") {
        this.o.progress(h.name, "up");
        void session.proc.exited.then(async (c) => {
          await session.tail.done;
          if (!this.stopping) this.o.progress(h.name, `the agent's ssh session ended (status ${c})${session.tail.last() ? `: ${session.tail.last()}` : ""}`);
        });
        return;
      }
      if (r === "slow") {
        session.proc.kill("SIGTERM");
        throw new HostFailed(`the agent did not register within ${this.o.registerTimeoutMs / 1000} s${session.tail.last() ? `: ${session.tail.last()}` : ""}`);
      }
      await session.tail.done;
      if (r === NEED_COPY && attempt === 0) {
        this.o.progress(h.name, `copying ebb to ${this.o.remotePath}`);
        await this.copy(h);
        continue;
      }
      throw new HostFailed(session.tail.last() || `ssh exited with status ${r}`);
    }
  }

  /** The agent's ssh session: the key goes first on its stdin, which then stays open. */
  private launch(h: HostSpec): { proc: Piped; tail: Tail } {
    const argv = sshArgv(h, this.o.ssh, agentCommand({ remotePath: this.o.remotePath, sha256: this.o.sha256, name: h.name, controllerPort: this.o.controllerPort, controllerHost: this.o.controllerHost, cpus: h.slots ?? this.o.cpus, logLevel: this.o.logLevel }));
    const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "ignore", stderr: "pipe" }) as Piped;
    this.sessions.set(h.name, proc);
    // The agent's own warnings and errors are passed on; ssh's errors end up in the failure.
    const tail = new Tail(proc.stderr, (line) => {
      if (/ agent (warn|error): |^ebb agent: /.test(line)) this.o.progress(h.name, line.replace(/^\S+Z /, ""));
    });
    proc.stdin.write(`${this.o.clusterKey}\n`);
    proc.stdin.flush();
    return { proc, tail };
  }

  private async copy(h: HostSpec): Promise<void> {
    const proc = Bun.spawn(sshArgv(h, this.o.ssh, copyCommand(this.o.remotePath)), { stdin: Bun.file(this.o.binary), stdout: "ignore", stderr: "pipe" });
    const tail = new Tail(proc.stderr);
    const code = await proc.exited;
    await tail.done;
    if (code !== 0) throw new HostFailed(`copying ebb to ${this.o.remotePath}: ${tail.last() || `ssh exited with status ${code}`}`);
  }

  /** Ends every agent: closing its ssh stdin stops it (and its ranks); ssh is killed if it lingers. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const all = [...this.sessions.values()];
    for (const p of all) {
      try {
        p.stdin.end();
      } catch {
        /* already closed */
      }
    }
    await Promise.all(
      all.map(async (p) => {
        const timer = setTimeout(() => p.kill("SIGTERM"), graceMs);
        await p.exited;
        clearTimeout(timer);
      }),
    );
  }
}
