/**
 * `ebb up --hosts a,b,c` / `--hostfile FILE`: the controller here, one agent per host over ssh
 * (roles/remote), until Ctrl-C; then every agent, and its ranks, is stopped.
 */
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startController, type ControllerOptions } from "../roles/controller/index.ts";
import { ensureSecret } from "../roles/controller/keys.ts";
import { lockStateDir } from "../roles/controller/lock.ts";
import { parseHostfile, parseHostsFlag, type HostSpec } from "../roles/remote/hosts.ts";
import { splitWords } from "../roles/remote/ssh.ts";
import { RemoteAgents } from "../roles/remote/start.ts";
import { agentConfigFor } from "../roles/agent/config.ts";
import { localAddresses, type HostPort } from "../util/addr.ts";
import { hostname } from "node:os";
import { ClusterCa } from "../roles/certs.ts";
import { clientTls, type ServerTls, type TlsRole } from "../util/tls.ts";
import { jitPolicy, NORMAL } from "../util/jit.ts";
import { isCompiled } from "../util/self.ts";
import { err, out } from "../util/stdio.ts";
import { CommandError, UsageError } from "./common.ts";
import { starting, untilSignal } from "./daemon.ts";

export interface HostsArgs {
  hosts?: string;
  hostfile?: string;
  "ssh-opts"?: string;
  "ssh-user"?: string;
  "remote-path"?: string;
  "require-all"?: boolean;
}

export function hostSpecs(a: HostsArgs): HostSpec[] {
  if (a.hosts !== undefined && a.hostfile !== undefined) throw new UsageError("give --hosts or --hostfile, not both");
  let specs: HostSpec[] | { error: string };
  if (a.hostfile !== undefined) {
    let text: string;
    try {
      text = readFileSync(a.hostfile, "utf8");
    } catch (e) {
      throw new UsageError(`--hostfile ${a.hostfile}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    specs = parseHostfile(text);
    if ("error" in specs) throw new UsageError(`--hostfile ${a.hostfile}: ${specs.error}`);
  } else {
    specs = parseHostsFlag(a.hosts ?? "");
    if ("error" in specs) throw new UsageError(`--hosts: ${specs.error}`);
  }
  return specs;
}

/** The binary's sha256, remembered in the state dir by path, size and mtime (hashing ~100 MB at every start costs). */
async function sha256(path: string, stateDir: string): Promise<string> {
  const st = statSync(path);
  const key = `${path} ${st.size} ${st.mtimeMs}`;
  const cache = join(stateDir, "binary.sha256");
  try {
    const [k, v] = readFileSync(cache, "utf8").split("\n");
    if (k === key && /^[0-9a-f]{64}$/.test(v ?? "")) return v!;
  } catch {
    /* not cached yet */
  }
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) h.update(chunk);
  const digest = h.digest("hex");
  try {
    writeFileSync(cache, `${key}\n${digest}\n`);
  } catch {
    /* a cache only */
  }
  return digest;
}

function clusterCa(stateDir: string): ClusterCa {
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    return ClusterCa.ensure(stateDir);
  } catch (e) {
    throw new CommandError((e as Error).message);
  }
}

function issue(ca: ClusterCa, file: string, role: TlsRole, names: string[]): ServerTls {
  try {
    return ca.issue(file, role, names);
  } catch (e) {
    throw new CommandError((e as Error).message);
  }
}

/** --agent-config's text, checked for every node it goes to (roles/agent/config.ts). */
export function checkedAgentConfig(path: string, names: readonly string[]): string {
  try {
    return agentConfigFor(path, names);
  } catch (e) {
    throw new UsageError(`--agent-config ${(e as Error).message}`);
  }
}

/** What a node in these states is not: registered with the controller. */
const ABSENT = new Set(["DOWN", "UNKNOWN"]);

/** Resolves, per name, once the controller at `url` lists that node as connected (polled: this controller is on another host). */
function watchNodes(url: string, token: string, tls: object | undefined): { registered(name: string): Promise<void>; stop(): void } {
  const waiting = new Map<string, () => void>();
  let stopped = false;
  let timer: Timer | undefined;
  const poll = async () => {
    if (stopped) return;
    try {
      const r = await fetch(`${url}/v1/nodes`, { headers: { Authorization: `Bearer ${token}` }, tls } as RequestInit);
      if (r.ok) {
        const { nodes } = (await r.json()) as { nodes: { name: string; state: string }[] };
        for (const n of nodes) if (!ABSENT.has(n.state)) waiting.get(n.name)?.();
      }
    } catch {
      /* asked again in a moment */
    }
    if (!stopped && waiting.size > 0) timer = setTimeout(poll, 100);
    else timer = undefined;
  };
  return {
    registered: (name) =>
      new Promise<void>((resolve) => {
        waiting.set(name, () => {
          waiting.delete(name);
          resolve();
        });
        if (!timer) timer = setTimeout(poll, 0);
      }),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The controller flags of `ebb up` given on its command line, for a controller started elsewhere (--controller-on-first). */
export function tuningFlags(args: Record<string, unknown>, names: string[]): string[] {
  const flags: string[] = [];
  for (const name of names) {
    const v = args[name];
    if (v === undefined) continue;
    if (name === "config" || name === "metrics-token") throw new UsageError(`--${name} names a file here; with --controller-on-first the controller runs on the first host: give its settings as flags`);
    if (typeof v === "boolean") flags.push(v ? `--${name}` : `--no-${name}`);
    else flags.push(`--${name}`, String(v));
  }
  return flags;
}

export async function upOnHosts(
  a: HostsArgs,
  o: { listen: HostPort; stateDir: string; cpus?: number; tuning: Partial<ControllerOptions>; controllerOnFirst?: boolean; controllerFlags?: string[]; tls?: boolean; agentConfig?: string },
): Promise<void> {
  const hosts = hostSpecs(a);
  const agentConfig = o.agentConfig === undefined ? undefined : checkedAgentConfig(o.agentConfig, hosts.map((h) => h.name));
  const ca = o.tls ? clusterCa(o.stateDir) : undefined;
  const opts = splitWords(a["ssh-opts"] ?? "");
  if ("error" in opts) throw new UsageError(`--ssh-opts: ${opts.error}`);
  if (!isCompiled()) throw new CommandError("ebb up --hosts copies this ebb binary to the hosts, so it must run as the compiled binary: npm run build, then dist/ebb up --hosts ...");
  const signal = untilSignal();
  const logLevel = process.env.EBB_LOG || "warn";
  const progress = (host: string, line: string) => err(`ebb up: ${host}: ${line}\n`);
  const common = {
    ssh: { opts, user: a["ssh-user"] },
    binary: process.execPath,
    remotePath: a["remote-path"] ?? ".ebb/bin/ebb",
    cpus: o.cpus,
    logLevel,
    registerTimeoutMs: 120_000,
    progress,
    agentConfig,
    // One certificate per host, naming it as ebb up reaches it (and its node name).
    tls: ca && { ca: ca.pem, certificate: (h: HostSpec, role: "agent" | "controller") => issue(ca, `${role}-${h.name}`, role, [h.host, h.name]) },
  };

  let remote: RemoteAgents;
  let url: string;
  let stopController: () => Promise<void>;
  let stopWatching = () => {};
  let hostsStarting: ReturnType<RemoteAgents["start"]> | undefined;
  if (o.controllerOnFirst) {
    // The controller on the first host, over ssh; its key and token are made here (and stay here
    // for the clients), and reach it on ssh's stdin.
    mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
    const token = ensureSecret(o.stateDir, "token");
    const clusterKey = ensureSecret(o.stateDir, "cluster.key");
    const release = await starting({ listen: o.listen, stateDir: o.stateDir }, async () => lockStateDir(o.stateDir, `${hosts[0]!.name} (ebb up --controller-on-first)`));
    const wildcard = ["0.0.0.0", "::"].includes(o.listen.host);
    const sha = await sha256(process.execPath, o.stateDir);
    remote = new RemoteAgents({ ...common, sha256: sha, clusterKey, controllerPort: new Promise<number>(() => {}), registered: () => Promise.reject(new Error("no controller yet")) });
    const started = await Promise.race([
      remote.startController(hosts[0]!, { listenHost: wildcard ? undefined : o.listen.host, port: o.listen.port, flags: o.controllerFlags ?? [], token }).catch((e: Error) => ({ error: e.message })),
      signal.then(() => "signal" as const),
    ]);
    if (typeof started !== "string" || started === "signal") {
      await remote.stop();
      release();
      if (started === "signal") return void err("ebb up: stopping\n");
      throw new CommandError(`the controller did not start on ${hosts[0]!.name}: ${started.error}`);
    }
    url = started;
    writeFileSync(join(o.stateDir, "controller.url"), `${url}\n`, { mode: 0o600 });
    chmodSync(join(o.stateDir, "controller.url"), 0o600);
    const watch = watchNodes(url, token, ca && clientTls(ca.pem, "controller"));
    stopWatching = watch.stop;
    const u = new URL(url);
    remote.controllerAt(u.hostname, Number(u.port), watch.registered);
    stopController = async () => release();
  } else {
    // The ssh sessions start while the controller does; each agent gets the controller's port on
    // stdin once it listens (the key first: it is the state dir's, known before).
    mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
    const clusterKey = ensureSecret(o.stateDir, "cluster.key");
    const waiting = new Map<string, () => void>();
    const seen = new Set<string>();
    let portKnown: (port: number) => void = () => {};
    const wildcard = ["0.0.0.0", "::", "127.0.0.1", "::1", "localhost"].includes(o.listen.host);
    remote = new RemoteAgents({
      ...common,
      sha256: await sha256(process.execPath, o.stateDir),
      controllerPort: new Promise<number>((resolve) => (portKnown = resolve)),
      controllerHost: wildcard ? undefined : o.listen.host,
      clusterKey,
      registered: (name) => (seen.has(name) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(name, resolve))),
    });
    hostsStarting = remote.start(hosts);
    let ctl: Awaited<ReturnType<typeof startController>>;
    try {
      ctl = await starting({ listen: o.listen, stateDir: o.stateDir }, () =>
        startController({
          listen: o.listen,
          stateDir: o.stateDir,
          ...o.tuning,
          tls: ca && { ...issue(ca, "controller", "controller", [hostname(), ...localAddresses(), ...(wildcard ? [] : [o.listen.host])]), ca: ca.pem },
          onNodeUp: (name) => {
            seen.add(name);
            waiting.get(name)?.();
          },
        }),
      );
    } catch (e) {
      await remote.stop();
      throw e;
    }
    portKnown(Number(new URL(ctl.url).port));
    url = ctl.url;
    stopController = () => ctl.stop();
  }
  const stopAll = async () => {
    stopWatching();
    await remote.stop();
    await stopController();
  };

  const started = await Promise.race([hostsStarting ?? remote.start(hosts), signal.then(() => "signal" as const)]);
  if (started === "signal") {
    err("ebb up: stopping\n");
    await stopAll();
    return;
  }
  stopWatching();
  if (started.failed.length > 0 && (a["require-all"] || started.up.length === 0)) {
    await stopAll();
    const list = started.failed.map((f) => `${f.name} (${f.why})`).join("; ");
    throw new CommandError(`${started.up.length === 0 ? "no host started" : "--require-all, and a host failed"}: ${list}`);
  }
  jitPolicy(NORMAL);
  out(
    [
      `ebb cluster is up: ${started.up.length} of ${hosts.length} hosts (${started.up.join(", ")})${started.failed.length > 0 ? `; failed: ${started.failed.map((f) => f.name).join(", ")}` : ""}${o.controllerOnFirst ? `; the controller on ${hosts[0]!.name}` : ""}`,
      `  API:    ${url}/v1`,
      `  token:  ${join(o.stateDir, "token")}`,
      ...(ca ? [`  TLS:    every link; the cluster CA is ${ca.caPath} (clients trust it from there, or from --ca / EBB_CA)`] : []),
      ...(o.controllerOnFirst ? [`  clients here find it through ${join(o.stateDir, "controller.url")} (--state-dir ${o.stateDir}, or EBB_STATE_DIR)`] : []),
      "",
      "Ctrl-C stops the cluster: every agent, and every job process on the hosts.",
      "",
    ].join("\n"),
  );
  await signal;
  err("ebb up: stopping\n");
  await stopAll();
}
