import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { ClusterCa } from "../roles/certs.ts";
import { defineCommand } from "./command.ts";
import { startController } from "../roles/controller/index.ts";
import { jitPolicy, NORMAL, zodParsers } from "../util/jit.ts";
import { isCompiled } from "../util/self.ts";
import { CommandError, defaultStateDir, guard, intFlag, UsageError } from "./common.ts";
import { tuningFlags, upOnHosts } from "./up-hosts.ts";
import { upInSlurm } from "./up-slurm.ts";
import { nodeCpuIds } from "./up-cpus.ts";
import { AgentThreads, MAX_AGENT_THREADS } from "./agent-threads.ts";
import { controllerTuning, listenFlag, starting, tuning, untilSignal } from "./daemon.ts";
import { declaredFlags, gresArgs, MEMORY_HINT } from "./inventory-flags.ts";
import { allowedCpus, declaredGpus, usableMemoryMb } from "../roles/agent/inventory.ts";
import { MAX_WARM_RANKS } from "../roles/agent/warm-pool.ts";
import { err, out } from "../util/stdio.ts";
import { hostRulesFor, readAgentConfig } from "../roles/agent/config.ts";
import type { HostRules } from "../model/host-rules.ts";

export default defineCommand({
  meta: { name: "up", description: "Start a whole cluster: a controller here and N agents (node01..nodeNN) on loopback, or one agent per host over ssh (--hosts)" },
  args: {
    nodes: { type: "string", description: "Number of local agents (default 4)", valueHint: "N" },
    "cpus-per-node": { type: "string", description: "CPUs each agent offers (default 2 locally; all of each host's with --hosts)", valueHint: "N" },
    "memory-per-node": { type: "string", description: `Memory each local agent offers: ${MEMORY_HINT} (default: the machine's, less 5 % and at most 2 GiB, shared by the agents)`, valueHint: "SIZE" },
    ...gresArgs,
    "warm-ranks": { type: "string", description: `Pre-started ranks each local agent keeps, with the runtime and ebb/comm loaded, for ranks run as \`ebb exec\` (a grow's above all); at most ${MAX_WARM_RANKS} (default 0: local agents share this machine, and each would keep its own)`, valueHint: "N" },
    "agent-threads": { type: "string", description: `Threads the local agents are spread over (default: the machine's cores, at most 8; 1: all on one thread); at most ${MAX_AGENT_THREADS}`, valueHint: "N" },
    listen: { type: "string", description: "Controller HOST:PORT (default 127.0.0.1:7700; 0.0.0.0:7700 with --hosts)", valueHint: "HOST:PORT" },
    hosts: { type: "string", description: "Start one agent on each of these hosts over ssh: [user@]host[:port],... (the node names are the hosts')", valueHint: "HOSTS" },
    hostfile: { type: "string", description: "Like --hosts, from a file: one host a line, # comments, optional slots=N (CPUs)", valueHint: "FILE" },
    "ssh-opts": { type: "string", description: "More options for ssh, e.g. \"-F cfg -o ProxyJump=gw\" (ssh also reads ~/.ssh/config)", valueHint: "OPTS", dashValue: true },
    "ssh-user": { type: "string", description: "User to log in as on hosts that do not name one", valueHint: "USER" },
    "remote-path": { type: "string", description: "Where the ebb binary goes on the hosts, copied when missing or different (default .ebb/bin/ebb, under the remote home)", valueHint: "PATH" },
    "require-all": { type: "boolean", description: "With --hosts: stop if any host fails to start (default: go on with the others)" },
    "controller-on-first": { type: "boolean", description: "With --hosts: run the controller on the first host (over ssh, --listen there) instead of here; its URL, token and key stay here in the state dir for the clients" },
    slurm: { type: "boolean", description: "Inside a Slurm allocation (sbatch, salloc): the controller here, one agent per allocated node via srun; ends with the allocation (state dir default ~/.ebb/slurm-JOBID, listen 0.0.0.0:0)" },
    "agent-config": { type: "string", description: "The agents' configuration file (as ebb agent --config; per node under nodes: node01, node[02-04], or the hosts' names): host rules; sent to the agents with --hosts and --slurm (default: none, every node is free)", valueHint: "FILE" },
    "state-dir": { type: "string", description: "Token, cluster key, database and agent files (default $EBB_STATE_DIR or ~/.ebb)", valueHint: "DIR" },
    tls: { type: "boolean", description: "Encrypt everything (API, agent and launcher links, step ports) with TLS: a cluster CA is made in the state dir (ca.pem, what clients trust) and certificates for the controller and each host (needs openssl)" },
    ...controllerTuning,
  },
  run: ({ args }) =>
    guard("up", async () => {
      const stateDir = args["state-dir"] ?? defaultStateDir();
      const onFirst = args["controller-on-first"] === true && !args.slurm && (args.hosts !== undefined || args.hostfile !== undefined);
      // Settings for a controller on another host go as flags (a --config file here would not be there).
      const controllerFlags = onFirst ? tuningFlags(args, Object.keys(controllerTuning).filter((k) => k !== "log-format")) : [];
      const opts = tuning(args);
      if (args.slurm || args.hosts !== undefined || args.hostfile !== undefined)
        for (const flag of ["memory-per-node", "gres", "features"] as const)
          if (args[flag] !== undefined && args[flag].length !== 0) throw new UsageError(`--${flag} is for local agents; with --hosts or --slurm each host's agent finds its own memory and GPUs`);
      if ((args.slurm || args.hosts !== undefined || args.hostfile !== undefined) && args["warm-ranks"] !== undefined) throw new UsageError("--warm-ranks is for local agents; with --hosts or --slurm each host's agent keeps ebb agent's default (1)");
      if ((args.slurm || args.hosts !== undefined || args.hostfile !== undefined) && args["agent-threads"] !== undefined) throw new UsageError("--agent-threads is for local agents; with --hosts or --slurm each host runs its own agent");
      if (args.slurm) {
        if (args.nodes !== undefined || args.hosts !== undefined || args.hostfile !== undefined) throw new UsageError("--slurm takes its nodes from the allocation; leave out --nodes, --hosts and --hostfile");
        for (const flag of ["ssh-opts", "ssh-user", "remote-path", "require-all", "controller-on-first"] as const)
          if (args[flag] !== undefined) throw new UsageError(`--${flag} goes with --hosts or --hostfile, not --slurm (srun starts the agents)`);
        const cpus = intFlag(args["cpus-per-node"], "--cpus-per-node");
        return upInSlurm({ listen: args.listen === undefined ? undefined : listenFlag(args.listen), stateDir: args["state-dir"], cpus, tuning: opts, tls: args.tls === true, agentConfig: args["agent-config"] });
      }
      if (args.hosts !== undefined || args.hostfile !== undefined) {
        if (args.nodes !== undefined) throw new UsageError("--nodes is for a local cluster; with --hosts the hosts are the nodes");
        const cpus = intFlag(args["cpus-per-node"], "--cpus-per-node");
        return upOnHosts(args, { listen: listenFlag(args.listen ?? "0.0.0.0:7700"), stateDir, cpus, tuning: opts, controllerOnFirst: onFirst, controllerFlags, tls: args.tls === true, agentConfig: args["agent-config"] });
      }
      for (const flag of ["ssh-opts", "ssh-user", "remote-path", "require-all", "controller-on-first"] as const)
        if (args[flag] !== undefined) throw new UsageError(`--${flag} goes with --hosts or --hostfile`);
      const n = intFlag(args.nodes, "--nodes", { max: 4096 }) ?? 4;
      const width = Math.max(2, String(n).length);
      const names = Array.from({ length: n }, (_, i) => `node${String(i + 1).padStart(width, "0")}`);
      const hostRules = localHostRules(args["agent-config"], names);
      const cpus = intFlag(args["cpus-per-node"], "--cpus-per-node", { max: 65536 }) ?? 2;
      const warmRanks = intFlag(args["warm-ranks"], "--warm-ranks", { min: 0, max: MAX_WARM_RANKS }) ?? 0;
      const threads = intFlag(args["agent-threads"], "--agent-threads", { max: MAX_AGENT_THREADS }) ?? Math.min(allowedCpus().length, 8);
      // GPUs only as declared: agents sharing one machine would each detect all of its GPUs.
      const declared = declaredFlags({ memory: args["memory-per-node"], gres: args.gres, features: args.features }, "--memory-per-node");
      const listen = listenFlag(args.listen ?? "127.0.0.1:7700");
      const tls = args.tls ? localCertificates(stateDir, listen.host) : undefined;
      const ctl = await starting({ listen, stateDir }, () => startController({ listen, stateDir, ...opts, tls: tls && { ...tls.controller, ca: tls.ca.pem } }));
      // An error that escapes the agents, or a refusal of one, ends `ebb up`: a local cluster without its agents is no use.
      const crash = (why: string) => {
        err(`ebb up: ${why}\n`);
        process.exit(1);
      };
      const hostCpus = allowedCpus();
      // More cores in all than the host has CPUs: the nodes' cores overlap, none is a CPU of its own.
      const sharedCpus = names.length * cpus > hostCpus.length;
      const agents = await AgentThreads.start(
        names.map((name, i) => {
          return {
            controller: ctl.url,
            clusterKey: ctl.clusterKey,
            name,
            cpus,
            cpuIds: nodeCpuIds(i, cpus, hostCpus),
            sharedCpus,
            memoryMb: declared.memoryMb ?? Math.floor(usableMemoryMb() / n),
            gpus: declaredGpus(declared.gres ?? []),
            features: declared.features ?? [],
            listen: { host: "127.0.0.1", port: 0 },
            stateDir: join(stateDir, "agents", name),
            tls: tls?.agents,
            ca: tls?.ca.pem,
            hostRules: hostRules[i],
            warmRanks,
          };
        }),
        threads,
        args["log-format"] === "json" ? "json" : "text",
        crash,
        () => ctl.linkAgents(),
      ).catch((e: Error) => Promise.reject(new CommandError(e.message)));
      jitPolicy(NORMAL);
      // The controller runs on this thread (the agents on their workers, each with its own zod).
      zodParsers();
      const ebb = isCompiled() ? "ebb" : "npx ebb";
      out(
        [
          `ebb local cluster is up: ${n} nodes x ${cpus} cpus`,
          `  API:    ${ctl.url}/v1   (OpenAPI: ${ctl.url}/v1/openapi.json)`,
          `  token:  ${join(stateDir, "token")}   (clients read it from there, or from EBB_TOKEN)`,
          ...(tls ? [`  TLS:    every link; the cluster CA is ${tls.ca.caPath}   (clients trust it from there, or from --ca / EBB_CA)`] : []),
          `  dashboard: ${ctl.url}/   (sign in with the token; Prometheus metrics at ${ctl.url}/metrics)`,
          "",
          "Try, in another terminal:",
          `  ${ebb} run -N 2 -l hostname`,
          `  ${ebb} submit examples/hello.sh && ${ebb} queue --all`,
          `  curl -s${tls ? ` --cacert ${tls.ca.caPath}` : ""} -H "Authorization: Bearer $(cat ${join(stateDir, "token")})" ${ctl.url}/v1/nodes`,
          "",
          "Ctrl-C stops the cluster.",
          "",
        ].join("\n"),
      );
      await untilSignal();
      err("ebb up: stopping\n");
      ctl.stopJudgingNodes();
      await agents.stop();
      await ctl.stop();
    }),
});

/** Each local agent's host rules from --agent-config (none without it: agents sharing one machine cannot tell their loads apart). */
function localHostRules(path: string | undefined, names: string[]): (HostRules | undefined)[] {
  if (path === undefined) return names.map(() => undefined);
  try {
    const file = readAgentConfig(path);
    return names.map((name) => hostRulesFor(file, path, name));
  } catch (e) {
    throw new UsageError(`--agent-config ${(e as Error).message}`);
  }
}

/** The cluster CA and the certificates of a local cluster: the controller's, and one for its agents (all on this host). */
function localCertificates(stateDir: string, listenHost: string) {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  try {
    const ca = ClusterCa.ensure(stateDir);
    const here = ["localhost", "127.0.0.1", "::1", hostname()];
    const wildcard = ["0.0.0.0", "::"].includes(listenHost);
    return { ca, controller: ca.issue("controller", "controller", wildcard ? here : [listenHost, ...here]), agents: ca.issue("agents", "agent", here) };
  } catch (e) {
    throw new CommandError((e as Error).message);
  }
}
