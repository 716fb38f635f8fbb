/**
 * `ebb up --hosts a,b,c` / `--hostfile FILE`: the controller here, one agent per host over ssh
 * (roles/remote), until Ctrl-C; then every agent, and its ranks, is stopped.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startController, type ControllerOptions } from "../roles/controller/index.ts";
import { parseHostfile, parseHostsFlag, type HostSpec } from "../roles/remote/hosts.ts";
import { splitWords } from "../roles/remote/ssh.ts";
import { RemoteAgents } from "../roles/remote/start.ts";
import type { HostPort } from "../util/addr.ts";
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

export async function upOnHosts(a: HostsArgs, o: { listen: HostPort; stateDir: string; cpus?: number; tuning: Partial<ControllerOptions> }): Promise<void> {
  const hosts = hostSpecs(a);
  const opts = splitWords(a["ssh-opts"] ?? "");
  if ("error" in opts) throw new UsageError(`--ssh-opts: ${opts.error}`);
  if (!isCompiled()) throw new CommandError("ebb up --hosts copies this ebb binary to the hosts, so it must run as the compiled binary: npm run build, then dist/ebb up --hosts ...");
  const signal = untilSignal();

  const waiting = new Map<string, () => void>();
  const seen = new Set<string>();
  const ctl = await starting({ listen: o.listen, stateDir: o.stateDir }, () =>
    startController({
      listen: o.listen,
      stateDir: o.stateDir,
      ...o.tuning,
      onNodeUp: (name) => {
        seen.add(name);
        waiting.get(name)?.();
      },
    }),
  );
  const wildcard = ["0.0.0.0", "::", "127.0.0.1", "::1", "localhost"].includes(o.listen.host);
  const remote = new RemoteAgents({
    ssh: { opts, user: a["ssh-user"] },
    binary: process.execPath,
    sha256: await sha256(process.execPath, o.stateDir),
    remotePath: a["remote-path"] ?? ".ebb/bin/ebb",
    controllerPort: Number(new URL(ctl.url).port),
    controllerHost: wildcard ? undefined : o.listen.host,
    clusterKey: ctl.clusterKey,
    cpus: o.cpus,
    logLevel: process.env.EBB_LOG || "warn",
    registerTimeoutMs: 120_000,
    progress: (host, line) => err(`ebb up: ${host}: ${line}\n`),
    registered: (name) => (seen.has(name) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(name, resolve))),
  });
  const stopAll = async () => {
    await remote.stop();
    await ctl.stop();
  };

  const started = await Promise.race([remote.start(hosts), signal.then(() => "signal" as const)]);
  if (started === "signal") {
    err("ebb up: stopping\n");
    await stopAll();
    return;
  }
  if (started.failed.length > 0 && (a["require-all"] || started.up.length === 0)) {
    await stopAll();
    const list = started.failed.map((f) => `${f.name} (${f.why})`).join("; ");
    throw new CommandError(`${started.up.length === 0 ? "no host started" : "--require-all, and a host failed"}: ${list}`);
  }
  jitPolicy(NORMAL);
  out(
    [
      `ebb cluster is up: ${started.up.length} of ${hosts.length} hosts (${started.up.join(", ")})${started.failed.length > 0 ? `; failed: ${started.failed.map((f) => f.name).join(", ")}` : ""}`,
      `  API:    ${ctl.url}/v1`,
      `  token:  ${join(o.stateDir, "token")}`,
      "",
      "Ctrl-C stops the cluster: every agent, and every job process on the hosts.",
      "",
    ].join("\n"),
  );
  await signal;
  err("ebb up: stopping\n");
  await stopAll();
}
