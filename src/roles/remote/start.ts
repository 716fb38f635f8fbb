/**
 * Starts one agent per host over ssh, in parallel, and stops them: the binary is copied where it is
 * missing or differs, the agent's ssh session stays open for as long as the cluster runs (its
 * stdin is the agent's lifeline), and its stderr is passed on, prefixed with the host.
 */
import type { Subprocess } from "bun";
import type { HostSpec } from "./hosts.ts";
import type { ServerTls } from "../../util/tls.ts";
import { agentCommand, controllerCommand, copyCommand, NEED_COPY, SERVER_ADDR, sshArgv, type SshSettings } from "./ssh.ts";

export interface RemoteOptions {
  ssh: SshSettings;
  /** The ebb binary to run there (this one). */
  binary: string;
  sha256: string;
  remotePath: string;
  /** The controller's port, sent to each agent once known (the sessions start while the controller does). */
  controllerPort: Promise<number>;
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
  /** TLS: the cluster CA (PEM) and a certificate for each host (its agent) or for the controller there. */
  tls?: { ca: string; certificate(h: HostSpec, role: "agent" | "controller"): ServerTls };
  /** The agents' configuration file's text (`ebb up --agent-config`), sent to each on stdin. */
  agentConfig?: string;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** How often a copy in progress says how far it got. */
const PROGRESS_MS = 5_000;

type Piped = Subprocess<"pipe", "pipe", "pipe">;

interface Session {
  proc: Piped;
  /** Its stderr. */
  tail: Tail;
  /** Its stdout. */
  out: Tail;
}

/** The last lines a process wrote to stderr, passed on as they come (when `echo`). */
class Tail {
  lines: string[] = [];
  private waiters: (() => boolean)[] = [];
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
    this.waiters = this.waiters.filter((w) => !w());
  }
  /** Resolves with the first match of `re` in a line, when one comes (never if the stream ends first). */
  find(re: RegExp): Promise<string> {
    const hit = () => {
      for (const l of this.lines) {
        const m = re.exec(l);
        if (m) return m[1] ?? m[0];
      }
      return undefined;
    };
    return new Promise((resolve) => {
      const now = hit();
      if (now !== undefined) return resolve(now);
      this.waiters.push(() => {
        const v = hit();
        if (v !== undefined) resolve(v);
        return v !== undefined;
      });
    });
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
  private readonly copies = new Map<string, Promise<void>>();
  /** The ssh processes copying the binary (ended by stop()). */
  private readonly copying = new Set<Subprocess>();

  constructor(private readonly o: RemoteOptions) {}

  /** Where the agents find the controller, once it runs on one of the hosts (--controller-on-first). */
  controllerAt(host: string, port: number, registered: (name: string) => Promise<void>): void {
    this.o.controllerHost = host;
    this.o.controllerPort = Promise.resolve(port);
    this.o.registered = registered;
  }

  /** Starts every host in parallel; the names of those that failed, with why. */
  async start(hosts: HostSpec[]): Promise<{ up: string[]; failed: { name: string; why: string }[] }> {
    const results = await Promise.all(
      hosts.map(async (h) => {
        try {
          await this.startHost(h);
          return { name: h.name };
        } catch (e) {
          if (!this.stopping) this.o.progress(h.name, `FAILED: ${(e as Error).message}`);
          return { name: h.name, why: (e as Error).message };
        }
      }),
    );
    return { up: results.filter((r) => r.why === undefined).map((r) => r.name), failed: results.flatMap((r) => (r.why === undefined ? [] : [{ name: r.name, why: r.why }])) };
  }

  private async startHost(h: HostSpec): Promise<void> {
    this.o.progress(h.name, "connecting");
    const tls = this.o.tls;
    const command = agentCommand({ remotePath: this.o.remotePath, sha256: this.o.sha256, name: h.name, controllerHost: this.o.controllerHost, cpus: h.slots ?? this.o.cpus, logLevel: this.o.logLevel, tls: tls !== undefined, config: this.o.agentConfig !== undefined });
    const cert = tls?.certificate(h, "agent");
    const tlsLines = tls && cert ? [b64(tls.ca), b64(cert.cert), b64(cert.key)] : [];
    const configLines = this.o.agentConfig === undefined ? [] : [b64(this.o.agentConfig)];
    await this.session(h, h.name, command, [this.o.clusterKey, this.o.controllerPort.then(String), ...tlsLines, ...configLines], () => this.o.registered(h.name));
    this.o.progress(h.name, "up");
  }

  /**
   * The controller of `--controller-on-first`, on host `h`: the key and token go on its stdin,
   * which then stays open. Resolves with its URL once it listens.
   */
  async startController(h: HostSpec, c: { listenHost?: string; port: number; flags: string[]; token: string }): Promise<string> {
    const label = `${h.name} (controller)`;
    this.o.progress(label, "connecting");
    const tls = this.o.tls?.certificate(h, "controller");
    const command = controllerCommand({ remotePath: this.o.remotePath, sha256: this.o.sha256, listenHost: c.listenHost, port: c.port, flags: c.flags, logLevel: this.o.logLevel, tls: tls !== undefined });
    const url = await this.session(h, label, command, [this.o.clusterKey, c.token, ...(tls && this.o.tls ? [b64(this.o.tls.ca), b64(tls.cert), b64(tls.key)] : [])], async (s) => {
      const [addr, port] = await Promise.all([s.out.find(new RegExp(`^${SERVER_ADDR} (\\S+)$`)), s.tail.find(/ebb controller: API https?:\/\/\S+:(\d+)\/v1/)]);
      return `${tls ? "https" : "http"}://${c.listenHost && !["0.0.0.0", "::"].includes(c.listenHost) ? (c.listenHost.includes(":") ? `[${c.listenHost}]` : c.listenHost) : addr}:${port}`;
    });
    this.o.progress(label, `up at ${url}`);
    return url;
  }

  /**
   * One ssh session (agent or controller) that stays open for as long as the cluster runs: when the
   * binary there is missing or differs, it is copied and the session started again. Resolves with
   * what `ready` resolves with, or throws with ssh's (or the remote side's) last words.
   */
  private async session<R>(h: HostSpec, label: string, command: string, stdinLines: (string | Promise<string>)[], ready: (s: Session) => Promise<R>): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      const session = this.launch(h, label, command, stdinLines);
      let timer: Timer | undefined;
      const slow = new Promise<"slow">((resolve) => (timer = setTimeout(() => resolve("slow"), this.o.registerTimeoutMs)));
      const r = await Promise.race([session.proc.exited, ready(session).then((v) => ({ v })), slow]);
      clearTimeout(timer);
      if (typeof r === "object") {
        void session.proc.exited.then(async (c) => {
          await session.tail.done;
          if (!this.stopping) this.o.progress(label, `the ${label === h.name ? "agent's" : "controller's"} ssh session ended (status ${c})${session.tail.last() ? `: ${session.tail.last()}` : ""}`);
        });
        return r.v;
      }
      if (r === "slow") {
        session.proc.kill("SIGTERM");
        throw new HostFailed(`the ${label === h.name ? "agent did not register" : "controller did not start"} within ${this.o.registerTimeoutMs / 1000} s${session.tail.last() ? `: ${session.tail.last()}` : ""}`);
      }
      await session.tail.done;
      if (r === NEED_COPY && attempt === 0) {
        await this.copy(h, label);
        continue;
      }
      throw new HostFailed(session.tail.last() || `ssh exited with status ${r}`);
    }
  }

  /** An ssh session: the secrets go first on its stdin, which then stays open. */
  private launch(h: HostSpec, label: string, command: string, stdinLines: (string | Promise<string>)[]): Session {
    // In a process group of its own: a Ctrl-C at the terminal reaches ebb up, which ends the
    // sessions in order, and not ssh itself (which would die with status 255 before "stopping").
    const proc = Bun.spawn(sshArgv(h, this.o.ssh, command), { stdin: "pipe", stdout: "pipe", stderr: "pipe", detached: true }) as Piped;
    this.sessions.set(label, proc);
    // The remote side's own warnings and errors are passed on; ssh's errors end up in the failure.
    const tail = new Tail(proc.stderr, (line) => {
      if (/ (agent|controller) (warn|error): |^ebb (agent|controller): (?!API )/.test(line)) this.o.progress(label, line.replace(/^\S+Z /, ""));
    });
    const out = new Tail(proc.stdout);
    // In order; a line still to come (the controller's port) is sent when known.
    void (async () => {
      for (const line of stdinLines) {
        const text = await line;
        if (proc.exitCode !== null) return;
        try {
          proc.stdin.write(`${text}\n`);
          proc.stdin.flush();
        } catch {
          return; // the session ended meanwhile
        }
      }
    })();
    return { proc, tail, out };
  }

  private async copy(h: HostSpec, label: string): Promise<void> {
    // Two sessions to one host (its controller, its agent) copy once.
    const key = `${h.user ?? ""}@${h.host}:${h.port ?? ""}`;
    let copying = this.copies.get(key);
    if (!copying) this.copies.set(key, (copying = this.copyNow(h, label)));
    try {
      await copying;
    } finally {
      this.copies.delete(key);
    }
  }

  /**
   * Streams the binary into ssh's stdin (written as the pipe takes it), saying its size first,
   * then every PROGRESS_MS how much of it went, and at the end how long it took.
   */
  private async copyNow(h: HostSpec, label: string): Promise<void> {
    const file = Bun.file(this.o.binary);
    const size = file.size;
    this.o.progress(label, `copying ebb (${mib(size)}) to ${this.o.remotePath}`);
    const started = performance.now();
    const proc = Bun.spawn(sshArgv(h, this.o.ssh, copyCommand(this.o.remotePath, size)), { stdin: "pipe", stdout: "ignore", stderr: "pipe", detached: true });
    this.copying.add(proc);
    const tail = new Tail(proc.stderr);
    let sent = 0;
    const timer = setInterval(() => this.o.progress(label, `copying: ${mib(sent)} of ${mib(size)} (${Math.floor((100 * sent) / size)}%)`), PROGRESS_MS);
    try {
      for await (const chunk of file.stream()) {
        if (proc.exitCode !== null || this.stopping) break;
        proc.stdin.write(chunk);
        await proc.stdin.flush();
        sent += chunk.length;
      }
      await proc.stdin.end();
    } catch {
      /* the session ended: its status and last words say why */
    } finally {
      clearInterval(timer);
    }
    const code = await proc.exited;
    this.copying.delete(proc);
    await tail.done;
    if (this.stopping) throw new HostFailed("stopped while copying ebb");
    if (code !== 0 || sent < size) throw new HostFailed(`copying ebb to ${this.o.remotePath}: ${tail.last() || `ssh exited with status ${code}`}`);
    const seconds = (performance.now() - started) / 1000;
    this.o.progress(label, `copied ${mib(size)} in ${seconds.toFixed(1)} s (${mib(size / Math.max(seconds, 0.001))}/s)`);
  }

  /** Ends every agent: closing its ssh stdin stops it (and its ranks); ssh is killed if it lingers. Then the controller, if it is remote. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const p of this.copying) p.kill("SIGTERM");
    const all = [...this.sessions.entries()];
    await this.end(all.filter(([label]) => !label.endsWith(" (controller)")).map(([, p]) => p), graceMs);
    await this.end(all.filter(([label]) => label.endsWith(" (controller)")).map(([, p]) => p), graceMs);
  }

  private async end(procs: Piped[], graceMs: number): Promise<void> {
    for (const p of procs) {
      try {
        p.stdin.end();
      } catch {
        /* already closed */
      }
    }
    await Promise.all(
      procs.map(async (p) => {
        const timer = setTimeout(() => p.kill("SIGTERM"), graceMs);
        await p.exited;
        clearTimeout(timer);
      }),
    );
  }
}
