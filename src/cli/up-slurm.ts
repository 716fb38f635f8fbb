/**
 * `ebb up --slurm`: inside a Slurm allocation, the controller here and one agent per allocated node
 * through srun (roles/remote/slurm.ts), until Ctrl-C, SIGTERM, or the end of the allocation.
 */
import { join } from "node:path";
import { startController, type ControllerOptions } from "../roles/controller/index.ts";
import { CONFIG_VAR, MAX_CONFIG_BYTES, slurmAllocation, srunArgv, TLS_VARS, type SrunProcess } from "../roles/remote/slurm.ts";
import { checkedAgentConfig } from "./up-hosts.ts";
import { ClusterCa } from "../roles/certs.ts";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { localAddresses, type HostPort } from "../util/addr.ts";
import { jitPolicy, NORMAL } from "../util/jit.ts";
import { ebbCommand } from "../util/self.ts";
import { withoutAllocatorSettings } from "../util/reexec.ts";
import { err, out } from "../util/stdio.ts";
import { CommandError, UsageError } from "./common.ts";
import { starting, untilSignal } from "./daemon.ts";

export async function upInSlurm(o: { listen?: HostPort; stateDir?: string; cpus?: number; tuning: Partial<ControllerOptions>; tls?: boolean; agentConfig?: string }): Promise<void> {
  const alloc = slurmAllocation(process.env);
  if ("error" in alloc) throw new UsageError(`--slurm: ${alloc.error}`);
  const agentConfig = o.agentConfig === undefined ? undefined : checkedAgentConfig(o.agentConfig, alloc.nodes);
  if (agentConfig !== undefined && Buffer.byteLength(agentConfig) > MAX_CONFIG_BYTES)
    throw new UsageError(`--agent-config ${o.agentConfig}: larger than ${MAX_CONFIG_BYTES} bytes, the most srun's environment carries to the agents; keep only what differs per node, or give each agent its own with ebb agent --config`);
  const listen = o.listen ?? { host: "0.0.0.0", port: 0 };
  const stateDir = o.stateDir ?? process.env.EBB_STATE_DIR ?? join(process.env.HOME ?? "/tmp", ".ebb", `slurm-${alloc.jobId}`);
  const signal = untilSignal();
  const pending = new Set(alloc.nodes);
  let allUp!: () => void;
  const registered = new Promise<void>((resolve) => (allUp = resolve));
  // TLS: the controller's certificate, and one for every agent naming all the allocation's nodes.
  const tls = o.tls ? slurmCertificates(stateDir, listen, alloc.nodes) : undefined;
  const ctl = await starting({ listen, stateDir }, () =>
    startController({
      listen,
      stateDir,
      ...o.tuning,
      tls: tls && { ...tls.controller, ca: tls.ca.pem },
      onNodeUp: (name) => {
        pending.delete(name);
        if (pending.size === 0) allUp();
      },
    }),
  );
  const loopback = ["127.0.0.1", "::1", "localhost"].includes(listen.host);
  const specific = !loopback && !["0.0.0.0", "::"].includes(listen.host);
  const argv = srunArgv({
    binary: ebbCommand(),
    nodes: alloc.nodes.length,
    controllerPort: Number(new URL(ctl.url).port),
    controllerHost: loopback ? "127.0.0.1" : specific ? listen.host : undefined,
    cpus: o.cpus,
    tls: tls !== undefined,
    config: agentConfig !== undefined,
  });
  err(`ebb up: starting ${alloc.nodes.length} agents with srun in Slurm job ${alloc.jobId}\n`);
  const srun = Bun.spawn(argv, { stdin: "pipe", stdout: "ignore", stderr: "pipe", env: { ...withoutAllocatorSettings(process.env), EBB_CLUSTER_KEY: ctl.clusterKey, EBB_LOG: process.env.EBB_LOG || "warn", ...(tls ? { [TLS_VARS.ca]: tls.ca.pem, [TLS_VARS.cert]: tls.agents.cert, [TLS_VARS.key]: tls.agents.key } : {}), ...(agentConfig !== undefined ? { [CONFIG_VAR]: agentConfig } : {}) } }) as SrunProcess;
  // srun's and the agents' messages go on to this stderr.
  void (async () => {
    for await (const chunk of srun.stderr) process.stderr.write(chunk);
  })().catch(() => {});
  const stop = async () => {
    try {
      srun.stdin.end();
    } catch {
      /* closed */
    }
    const timer = setTimeout(() => srun.kill("SIGTERM"), 10_000);
    await srun.exited;
    clearTimeout(timer);
    await ctl.stop();
  };

  const first = await Promise.race([registered.then(() => "up" as const), srun.exited.then((c) => ({ exited: c })), signal.then(() => "signal" as const)]);
  if (first === "signal") {
    err("ebb up: stopping\n");
    return stop();
  }
  if (first !== "up") {
    await ctl.stop();
    throw new CommandError(`srun exited with status ${first.exited} before every agent registered (missing: ${[...pending].join(", ")})`);
  }
  jitPolicy(NORMAL);
  out(
    [
      `ebb cluster is up in Slurm job ${alloc.jobId}: ${alloc.nodes.length} nodes (${alloc.nodes.join(", ")})`,
      `  API:    ${ctl.url}/v1`,
      ...(tls ? [`  TLS:    every link; the cluster CA is ${tls.ca.caPath} (clients trust it from there, or from --ca / EBB_CA)`] : []),
      `  state:  ${stateDir}   (export EBB_STATE_DIR=${stateDir} for ebb run, submit, queue...)`,
      "",
      "It ends with the allocation, or on Ctrl-C.",
      "",
    ].join("\n"),
  );
  const end = await Promise.race([signal.then(() => "signal" as const), srun.exited.then((c) => ({ exited: c }))]);
  if (end !== "signal") err(`ebb up: srun ended (status ${end.exited}); stopping\n`);
  else err("ebb up: stopping\n");
  await stop();
}

function slurmCertificates(stateDir: string, listen: HostPort, nodes: string[]) {
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const ca = ClusterCa.ensure(stateDir);
    const here = localAddresses();
    const wildcard = ["0.0.0.0", "::"].includes(listen.host);
    return { ca, controller: ca.issue("controller", "controller", [hostname(), "localhost", ...here, ...(wildcard ? [] : [listen.host])]), agents: ca.issue("agents", "agent", nodes) };
  } catch (e) {
    throw new CommandError((e as Error).message);
  }
}
