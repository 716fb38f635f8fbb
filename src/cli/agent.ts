import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "./command.ts";
import { AgentWorker } from "./agent-worker.ts";
import { hostRulesFor, readAgentConfig } from "../roles/agent/config.ts";
import type { HostRules } from "../model/host-rules.ts";
import { defaultStateDir, guard, intFlag, UsageError } from "./common.ts";
import { MAX_WARM_RANKS } from "../roles/agent/warm-pool.ts";
import { STEP_MIB_PER_SECOND } from "../roles/agent/server.ts";
import { declaredFlags, gpuDevicesFlag, gresArgs, MEMORY_HINT } from "./inventory-flags.ts";
import { cgroup2Root } from "../roles/agent/containment.ts";
import { inventory } from "../roles/agent/inventory.ts";
import { listenFlag, logArgs, logFormatFlag, serverTlsFlags, shortHostname, starting, stdinClosed, tlsArgs, untilSignal } from "./daemon.ts";
import { readPem } from "../util/tls.ts";
import { existsSync } from "node:fs";
import { err } from "../util/stdio.ts";
import { currentLogFormat, logger, type LogFormat } from "../util/log.ts";

const log = logger("agent");

export default defineCommand({
  meta: { name: "agent", description: "Run a node agent: registers the node, starts and kills job processes, serves step trees" },
  args: {
    controller: { type: "string", description: "Controller URL, e.g. http://head:7700 (default $EBB_CONTROLLER)", valueHint: "URL" },
    name: { type: "string", description: "Node name (default: the short hostname)", valueHint: "NAME" },
    cpus: { type: "string", description: "Cores to offer (default: the CPUs this agent may run on, its cpuset)", valueHint: "N" },
    "shared-cpus": { type: "boolean", description: "Other agents run on this host's CPUs (several nodes on one machine): each job runs on all of them, a step's ranks bound one to a CPU by rank only where they fit, as when --cpus is more than the CPUs (default: the cores are CPUs of this node's own)" },
    memory: { type: "string", description: `Memory to offer: ${MEMORY_HINT} (default: the machine's, less 5 % and at most 2 GiB for the system)`, valueHint: "SIZE" },
    ...gresArgs,
    "gpu-devices": { type: "string", description: "Each GPU's device file, in index order, comma-separated (default: detected, /dev/nvidiaN or AMD's render nodes): a job's processes cannot open those of the GPUs it does not hold", valueHint: "FILE,.." },
    listen: { type: "string", description: "HOST:PORT for launchers and other agents (default: 127.0.0.1:0 for a local controller, else 0.0.0.0:0)", valueHint: "HOST:PORT" },
    advertise: { type: "string", description: "HOST:PORT others should use to reach this agent (default: guessed)", valueHint: "HOST:PORT" },
    "key-file": { type: "string", description: "Cluster key file (default $EBB_CLUSTER_KEY, else STATE_DIR/cluster.key)", valueHint: "FILE" },
    "state-dir": { type: "string", description: "Agent working files (default ~/.ebb/agents/NAME)", valueHint: "DIR" },
    ...tlsArgs,
    ca: { type: "string", description: "With an https:// controller: the cluster CA that signed the controller's and the other agents' certificates (default $EBB_CA, else ca.pem in $EBB_STATE_DIR or ~/.ebb)", valueHint: "FILE" },
    config: { type: "string", description: "JSON configuration file: {hostStates: {interval, smoothing, hysteresis, dwell, refresh, rules: {INPUT: {busy, overloaded, owner, ...}}, expression}, nodes: {HOSTLIST: {hostStates: {...}}}}: the rules that make this node busy, overloaded or its owner's (default: none, the node is always free; see README)", valueHint: "FILE" },
    "warm-ranks": { type: "string", description: `Pre-started ranks to keep, with the runtime and ebb/comm loaded, for ranks run as \`ebb exec\` (a grow's above all); 0: none (default 1, at most ${MAX_WARM_RANKS})`, valueHint: "N" },
    "step-rate": { type: "string", description: `MiB a second that one user's step connections (their launchers, their steps' parents in the step tree) may send this agent together, and at once; past it the agent pauses reading them (default ${STEP_MIB_PER_SECOND})`, valueHint: "MIB" },
    "tied-to-stdin": { type: "boolean", description: "Stop, killing this node's job processes, when stdin closes (how ebb up --hosts starts agents over ssh: a dead link stops them)" },
    ...logArgs(),
  },
  run: ({ args }) =>
    guard("agent", async () => {
      logFormatFlag(args["log-format"]);
      const controller = (args.controller ?? process.env.EBB_CONTROLLER ?? "").replace(/\/+$/, "");
      if (!/^https?:\/\/[^/]+$/.test(controller)) throw new UsageError(`--controller ${controller || "(missing)"}: give the controller's URL, e.g. --controller http://head:7700`);
      const name = args.name ?? shortHostname();
      let key = process.env.EBB_CLUSTER_KEY;
      const keyFile = args["key-file"] ?? join(defaultStateDir(), "cluster.key");
      if (args["key-file"] || !key) {
        try {
          key = readFileSync(keyFile, "utf8").trim();
        } catch {
          throw new UsageError(`cannot read the cluster key from ${keyFile}; copy the controller's cluster.key there, or set EBB_CLUSTER_KEY`);
        }
      }
      const tls = serverTlsFlags(args);
      const caFile = args.ca ?? (process.env.EBB_CA || (existsSync(join(defaultStateDir(), "ca.pem")) ? join(defaultStateDir(), "ca.pem") : undefined));
      let ca: string | undefined;
      if (controller.startsWith("https:")) {
        if (caFile === undefined) throw new UsageError(`the controller at ${controller} uses TLS: give the cluster's CA with --ca FILE or EBB_CA (ebb up --tls writes it to STATE_DIR/ca.pem)`);
        if (!tls) throw new UsageError("the controller uses TLS, so launchers reach this agent's step port with TLS too: give --tls-cert and --tls-key (a certificate the cluster CA signed)");
        try {
          ca = readPem(caFile, args.ca !== undefined ? "--ca" : "EBB_CA", "CERTIFICATE");
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
      } else if (tls || args.ca !== undefined) throw new UsageError(`--tls-cert/--tls-key/--ca go with an https:// controller; ${controller} is plain HTTP`);
      const local = /^https?:\/\/(127\.|localhost|\[::1\])/.test(controller);
      if (args.advertise) listenFlag(args.advertise, "--advertise");
      const listen = listenFlag(args.listen ?? (local ? "127.0.0.1:0" : "0.0.0.0:0"));
      const stateDir = args["state-dir"] ?? join(defaultStateDir(), "agents", name);
      let hostRules: HostRules | undefined;
      if (args.config !== undefined) {
        try {
          hostRules = hostRulesFor(readAgentConfig(args.config), args.config, name);
        } catch (e) {
          throw new UsageError(`--config ${(e as Error).message}`);
        }
      }
      const warmRanks = intFlag(args["warm-ranks"], "--warm-ranks", { min: 0, max: MAX_WARM_RANKS }) ?? 1;
      const stepRate = intFlag(args["step-rate"], "--step-rate", { min: 1, max: 1 << 20 });
      const offer = inventory(declaredFlags(args), cgroup2Root());
      const gpuDevices = gpuDevicesFlag(args["gpu-devices"], offer, (m) => log.warn(m));
      const fatal = (message: string) => {
        if (currentLogFormat() === "json") logger("agent").error(message, { node: name });
        else err(`ebb agent: ${message}\n`);
        process.exit(1);
      };
      // On a thread of its own (agent-thread.ts): a rank then starts inside its job's cgroups without a joining shell.
      const agent = await starting({ listen, stateDir }, () => AgentWorker.start([{
        controller,
        clusterKey: key!,
        name,
        ...offer,
        sharedCpus: args["shared-cpus"] === true,
        gpuDevices,
        listen,
        advertise: args.advertise,
        stateDir,
        tls,
        ca,
        hostRules,
        warmRanks,
        ...(stepRate === undefined ? {} : { stepMiBPerSecond: stepRate }),
      }], currentLogFormat(), fatal));
      await (args["tied-to-stdin"] ? Promise.race([untilSignal(), stdinClosed().then(() => log.warn("stdin closed (ebb up ended, or its ssh link is gone); stopping"))]) : untilSignal());
      await agent.stop();
      if (args["tied-to-stdin"]) process.exit(0);
    }),
});
