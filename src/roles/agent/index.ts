/**
 * The node agent: registers its node with the controller and heartbeats; starts and kills job
 * processes on the controller's orders; serves step trees for launchers and other agents.
 */
import { agentIsRoot } from "../identity.ts";
import { cfgLibrary } from "./cfg-lib.ts";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { AGENT_RECONNECT_MAX_MS, AgentToController, ControllerToAgent, isRefusal } from "../../proto/agent.ts";
import { Channel, type ClientLink, type ClientLinkOptions } from "../../proto/channel.ts";
import { FRAME_MAX } from "../../proto/frames.ts";
import { LocalPeer, PeerPool } from "../../tbon/pool.ts";
import { firstExternalIPv4, formatHostPort, parseHostPort, type HostPort } from "../../util/addr.ts";
import { logger } from "../../util/log.ts";
import { currentUser } from "../../util/user.ts";
import { clientTls, type ServerTls } from "../../util/tls.ts";
import { VERSION } from "../../util/version.ts";
import { PROTOCOL_VERSION } from "../../proto/version.ts";
import { baseEnv, withEbbOnPath } from "./env.ts";
import { JobRunner } from "./jobs.ts";
import { PathProbes } from "./path-probe.ts";
import { GroupLog } from "./group-log.ts";
import { Containment } from "./containment.ts";
import type { Sentinel } from "./sentinel.ts";
import { NodeAllocation, UsedCredentials } from "./allocation.ts";
import { allowedCpus, type GpuVendor } from "./inventory.ts";
import type { Device } from "./device-fence.ts";
import { coreCpus, gpuVars, placementOf, type JobPlacement, type NodeOffer } from "./placement.ts";
import { slurmGpuVars } from "../slurm-env.ts";
import { UsageReports } from "./usage-reports.ts";
import type { JobUsage } from "./cgroup-limits.ts";
import { ProcessTable } from "./procs.ts";
import { serveSteps } from "./server.ts";
import { sweepStaleShm } from "./shm-sweep.ts";
import { installEbbCommand } from "./ebb-command.ts";
import { StepService } from "./steps.ts";
import { HostStates } from "./host-states.ts";
import { cgroupCpuSeconds, processesCpuSeconds } from "./host-sample.ts";
import type { HostRules } from "../../model/host-rules.ts";
import { ebbNamesOf, WarmPool } from "./warm-pool.ts";

const log = logger("agent");

export interface AgentOptions {
  controller: string;
  clusterKey: string;
  name: string;
  /** What the node offers (inventory.ts): cores, memory in MiB, GPUs by index with their type, features. */
  cpus: number;
  /** The host CPUs its cores are, core i on cpuIds[i] (cycling); default: the CPUs the agent may run on, in order. */
  cpuIds?: number[];
  /** Other nodes run on the same CPUs (`ebb up`'s, when they outnumber the host's): jobs get all of cpuIds, a step's ranks are bound one to a CPU by world rank only where they fit. */
  sharedCpus?: boolean;
  memoryMb: number;
  gpus?: (string | null)[];
  gpuVendor?: GpuVendor;
  /** Each GPU's device files, by index (gpu-devices.ts): a job is fenced off those of the GPUs it does not hold. */
  gpuDevices?: Device[][];
  features?: string[];
  listen: HostPort;
  /** HOST:PORT others use to reach this agent, when the listen address is not it. */
  advertise?: string;
  stateDir: string;
  /**
   * TLS (an https:// controller): the step port presents `tls`, and the controller's and other
   * agents' certificates must be signed by the cluster CA `ca` (PEM).
   */
  tls?: ServerTls;
  ca?: string;
  fanout?: number;
  /** The node's host rules (the config file's hostStates for this node); none: the node is always free. */
  hostRules?: HostRules;
  /** Warm ranks kept ready for `ebb exec` ranks (warm-pool.ts); 0 or absent: none. */
  warmRanks?: number;
  /** What one job's step connections may send a second, and at once, in MiB (server.ts STEP_MIB_PER_SECOND). */
  stepMiBPerSecond?: number;
  /**
   * Step-tree edges shared by the agents of one process (`ebb up`'s thread): each agent adds its
   * own step service to it, so a launch passes from agent to agent in-process instead of through a
   * socket and a JSON round trip at every hop. The caller closes it.
   */
  peers?: PeerPool;
  /** The sentinel shared by the agents of one process (`ebb up`'s thread), which die together; absent: the agent's own. */
  sentinel?: Sentinel;
  /**
   * The link to the controller when it runs in this process (`ebb up`'s agents: an in-process
   * pair, proto/port-link.ts); absent: a WebSocket to `controller`. Either carries the same messages.
   */
  link?(o: ClientLinkOptions<ControllerToAgent>): ClientLink<AgentToController>;
  /** Called if the controller refuses this agent for good (e.g. its name is taken). */
  onFatal?(message: string): void;
}

export interface AgentHandle {
  name: string;
  addr: string;
  stop(): Promise<void>;
}

/** Writes a file anyone may read (a CA certificate is public); returns its path. */
function writePublic(path: string, text: string): string {
  writeFileSync(path, text, { mode: 0o644 });
  chmodSync(path, 0o644);
  return path;
}

function hostOf(addr: string): string {
  const hp = parseHostPort(addr);
  return "error" in hp ? addr : hp.host;
}

/** The host others reach this agent at when --advertise does not say: the one it listens on, else guessed. */
function advertisedHost(listen: HostPort, controller: string): string {
  if (listen.host !== "0.0.0.0" && listen.host !== "::") return listen.host;
  const ctlHost = new URL(controller).hostname;
  if (ctlHost === "127.0.0.1" || ctlHost === "localhost" || ctlHost === "[::1]") return "127.0.0.1";
  return firstExternalIPv4();
}

/** A TLS cluster's settings are all or nothing: an https controller, a CA to trust, a certificate to serve steps with. */
function checkTls(o: AgentOptions, controllerUrl: string): void {
  const https = controllerUrl.startsWith("https:");
  if (https && o.ca === undefined) throw new Error(`the controller at ${controllerUrl} uses TLS: give the cluster's CA (--ca FILE or EBB_CA; ebb up --tls writes it to STATE_DIR/ca.pem)`);
  if (https && o.tls === undefined) throw new Error("the controller uses TLS, so launchers reach this agent's step port with TLS too: give --tls-cert and --tls-key (a certificate the cluster CA signed)");
  if (!https && (o.tls !== undefined || o.ca !== undefined)) throw new Error(`--tls-cert/--tls-key/--ca go with an https:// controller; ${controllerUrl} is plain HTTP`);
}

export async function startAgent(o: AgentOptions): Promise<AgentHandle> {
  mkdirSync(o.stateDir, { recursive: true });
  const controllerUrl = o.controller.replace(/\/+$/, "");
  checkTls(o, controllerUrl);
  const pendingExits = new Map<number, { exitCode: number; message?: string; lostNode?: string; run?: number; usage?: JobUsage; gone?: true }>();
  const killed = new Set<number>();
  let channel: ClientLink<AgentToController> | undefined;
  const send = (msg: AgentToController): boolean => {
    if (!channel?.isOpen) return false;
    channel.send(msg);
    return true;
  };

  const record = new GroupLog(join(o.stateDir, "process-groups"), join(o.stateDir, "process-groups.json"));
  const containment = new Containment(o.name, join(o.stateDir, "process-groups"), o.sentinel);
  // GPUs with device files, and a kernel that fences them: each job sees only its own, numbered from 0.
  const fenced = (o.gpuDevices?.length ?? 0) > 0 && containment.canFence();
  const offer: NodeOffer = { cpus: o.cpus, memoryMb: o.memoryMb, gpus: o.gpus ?? [], gpuVendor: o.gpuVendor, cpuIds: o.cpuIds ?? allowedCpus(), sharedCpus: o.sharedCpus };
  // Each job's cgroup limits follow its share; a job that left is forgotten once its processes are gone.
  const allocation = new NodeAllocation((jobId, now) => {
    if (now) {
      const p = placementOf(now.share, offer);
      containment.setLimits(jobId, { cpus: p.cpus, memMiB: p.memMiB });
      if (fenced) containment.setDenied(jobId, o.gpuDevices!.flatMap((files, gpu) => (p.gpus.includes(gpu) ? [] : files)));
      return;
    }
    usage.left(jobId);
    if (!procs.has(jobId)) containment.forgetJob(jobId);
  });
  const usage = new UsageReports(send, (jobId) => allocation.holds(jobId));
  const binDir = installEbbCommand(o.stateDir, o.name);
  const warm = o.warmRanks ? new WarmPool(o.warmRanks, ebbNamesOf(binDir.dir), o.name, () => containment.warmCgroup()) : undefined;
  const procs = new ProcessTable(
    record,
    (jobId) => {
      // What the job used here so far goes before its exit (jobs.ts reports it after this) or its job.cleaned.
      const used = containment.usage(jobId);
      if (used && runner.runsLaunch(jobId) && !killed.has(jobId)) usage.reportAtExit(jobId, used);
      else if (used) usage.report(jobId, used);
      if (!allocation.holds(jobId)) containment.forgetJob(jobId);
      if (killed.delete(jobId)) {
        procs.forget(jobId);
        send({ t: "job.cleaned", jobId });
      }
    },
    containment,
    warm,
  );
  /** A job's CPUs here, its cores (a whole node's without a share) and the variables that show it its GPUs, ebb's, the vendor's and Slurm's. */
  const placement = (jobId: number): JobPlacement => {
    const share = allocation.of(jobId)?.share ?? null;
    const p = placementOf(share, offer);
    return { cpus: p.cpus, ownCpus: p.ownCpus, cores: share ? share.cores.length : offer.cpus, gpus: p.gpus, vars: { ...gpuVars(p.gpus, offer, fenced), ...slurmGpuVars(p.gpus) }, gpuVarsOf: (some) => gpuVars(some, offer, fenced, p.gpus), cpusOf: (cores) => coreCpus(cores, share, offer) };
  };
  procs.reapLeftovers();
  // Next to the ebb command that job processes run (so readable where it is), for `ebb run` inside jobs.
  const controllerCa = o.ca === undefined ? undefined : { pem: o.ca, path: writePublic(join(binDir.dir, "ca.pem"), o.ca) };
  const agentEnv = baseEnv();
  const env = (...overlays: Record<string, string>[]) => withEbbOnPath(Object.assign({}, agentEnv, ...overlays), binDir);
  const pool = o.peers ?? new PeerPool(o.ca);
  const nameRequests = new Map<number, (r: { ok: boolean; port?: string; error?: string }) => void>();
  let nextNameRequest = 1;
  const names = (jobId: number, op: "publish" | "lookup" | "unpublish", service: string, port?: string) =>
    new Promise<{ ok: boolean; port?: string; error?: string }>((resolve) => {
      if (!channel?.isOpen) return resolve({ ok: false });
      const reqId = nextNameRequest++;
      nameRequests.set(reqId, resolve);
      send({ t: "names", reqId, jobId, op, service, port });
    });
  const shmDir = existsSync("/dev/shm") ? "/dev/shm" : join(o.stateDir, "shm");
  for (const dir of new Set([shmDir, process.env.XDG_RUNTIME_DIR ?? tmpdir()])) {
    const swept = sweepStaleShm(dir, { node: o.name, pid: process.pid });
    if (swept.length > 0) log.info(`removed ${swept.length} file(s) of dead processes or of this agent's earlier life from ${dir}`);
  }
  const nodeHost = o.advertise ? hostOf(o.advertise) : advertisedHost(o.listen, controllerUrl);
  const paths = new PathProbes();
  const steps = new StepService({
    allocation,
    usedCredentials: new UsedCredentials(),
    name: o.name,
    clusterKey: o.clusterKey,
    controllerUrl,
    nodeHost,
    controllerCa,
    procs,
    pool,
    processEnv: env,
    placement,
    names,
    perf: (jobId, s) => send({ t: "perf", jobId, ranks: s.ranks, iterations: s.iterations, loopNs: s.loopNs, commNs: s.commNs, ...(s.stateBytes !== undefined ? { stateBytes: s.stateBytes } : {}) }),
    cfgLibrary: () => cfgLibrary(o.stateDir, o.name),
    oomKills: (jobId) => containment.usage(jobId)?.oomKills ?? 0,
    program: (jobId, info) => {
      const num = (k: string) => (info[k] === undefined || !/^\d+$/.test(info[k]!) ? undefined : Number(info[k]));
      send({ t: "program", jobId, structure: info.structure?.slice(0, 65536), pc: num("pc"), iteration: num("iteration"), bound: num("bound") });
    },
    shmDir,
    paths,
  });
  const server = serveSteps(o.listen, steps, o.clusterKey, o.tls, o.stepMiBPerSecond, (jobId) => allocation.userOf(jobId));
  const addr = o.advertise ?? formatHostPort({ host: nodeHost, port: server.port! });
  pool.addLocal(addr, steps);

  // Jobs' CPU, which cpu.other leaves out: their cgroups' total, else their process groups' leaders'.
  const hostStates = new HostStates(o.hostRules, {
    jobsCpuSeconds: () => (containment.base ? cgroupCpuSeconds(containment.base) : undefined) ?? processesCpuSeconds(procs.leaders()),
    jobsCgroup: containment.base,
  }, (h) => send({ t: "host.state", ...h }));

  // A command job's step root here reaches this agent's own part of its step without a loop turn
  // per message (its launch, its ranks' exits: two turns of the job's way before); the edges to
  // other agents keep a turn each (tbon/pool.ts inTurn).
  const own = new LocalPeer(steps, queueMicrotask);
  const runner = new JobRunner({
    name: o.name,
    stateDir: o.stateDir,
    procs,
    connect: (a) => (a === addr ? own : pool.get(a)),
    fanout: o.fanout ?? 8,
    processEnv: env,
    placement,
    controllerUrl,
    controllerCa,
    paths,
    exited: (jobId, exitCode, message, lostNode, run) => {
      const used = usage.takeAtExit(jobId);
      // Nothing of the job left here: the controller sends no job.kill for it (its `shares` without the job answers).
      const exit = { exitCode, message, lostNode, run, ...(used ? { usage: used } : {}), ...(procs.has(jobId) ? {} : { gone: true as const }) };
      pendingExits.set(jobId, exit);
      send({ t: "job.exit", jobId, ...exit });
    },
  });

  const activeJobs = () => [...new Set([...procs.jobs(), ...pendingExits.keys()])];

  const handle = (msg: ControllerToAgent) => {
    switch (msg.t) {
      case "welcome":
        if (!registered) log.info(`registered with the controller at ${controllerUrl} as ${o.name}`);
        registered = true;
        restartHeartbeat(msg.heartbeatMs);
        for (const id of msg.kill) procs.signal(id, "SIGKILL");
        for (const [jobId, e] of pendingExits) send({ t: "job.exit", jobId, ...e });
        usage.resend();
        hostStates.resend();
        return;
      case "job.start":
        log.debug(`starting job ${msg.job.id}`, { kind: msg.job.kind });
        runner.start(msg.job);
        return;
      case "job.kill":
        // The controller has ended the job: that answers its exit report as a job.ack would.
        pendingExits.delete(msg.jobId);
        runner.kill(msg.jobId, msg.reason ?? "job killed");
        procs.signal(msg.jobId, msg.signal);
        if (!msg.confirm) return;
        if (procs.has(msg.jobId)) killed.add(msg.jobId);
        else {
          procs.forget(msg.jobId);
          usage.flush(msg.jobId);
          send({ t: "job.cleaned", jobId: msg.jobId });
        }
        return;
      case "job.ack":
        pendingExits.delete(msg.jobId);
        return;
      case "job.signal":
        runner.signal(msg.jobId, msg.signal as NodeJS.Signals, msg.batchOnly);
        return;
      case "shares":
        allocation.setAll(msg.jobs);
        // A job whose exit said it had nothing left here, and that has left the node: the controller
        // has the exit and sends no job.kill, so what of it started here since dies as by that kill.
        for (const [jobId, e] of pendingExits)
          if (e.gone && !allocation.holds(jobId)) {
            pendingExits.delete(jobId);
            runner.kill(jobId, "job ended");
            procs.signal(jobId, "SIGKILL");
          }
        return;
      case "alloc":
        allocation.setOnly(msg.jobId, msg.user ?? null);
        return;
      case "names.result": {
        const done = nameRequests.get(msg.reqId);
        nameRequests.delete(msg.reqId);
        done?.({ ok: msg.ok, port: msg.port, error: msg.error });
        return;
      }
    }
  };

  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const restartHeartbeat = (ms: number) => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = setInterval(() => {
      send({ t: "heartbeat", jobs: activeJobs() });
      for (const jobId of procs.jobs()) containment.sample(jobId);
    }, ms);
  };

  let registered = false;
  const linkOptions: ClientLinkOptions<ControllerToAgent> = {
    schema: ControllerToAgent,
    reconnect: { maxDelayMs: AGENT_RECONNECT_MAX_MS },
    onOpen: () => {
      log.info(`connected to the controller at ${controllerUrl}; registering as ${o.name} (${addr})`);
      channel!.send({ t: "hello", name: o.name, cpus: o.cpus, memoryMb: o.memoryMb, gpus: offer.gpus.length > 0 ? o.gpus : undefined, features: o.features?.length ? o.features : undefined, addr, version: VERSION, protocol: PROTOCOL_VERSION, jobs: activeJobs(), time: Date.now(), advertised: o.advertise !== undefined, runAs: jobsRunAs() });
    },
    onMessage: handle,
    onInvalid: (error) => log.warn("invalid message from the controller", { error }),
    onClose: (reason, code, retryInMs) => {
      for (const done of nameRequests.values()) done({ ok: false });
      nameRequests.clear();
      if (isRefusal(code)) {
        const why = `the controller at ${controllerUrl} refused this agent: ${reason}`;
        channel?.close();
        if (o.onFatal) o.onFatal(why);
        else log.error(why);
        return;
      }
      if (retryInMs === undefined) return;
      const again = `retrying in ${(retryInMs / 1000).toFixed(1)} s`;
      if (registered) log.warn(`lost the controller at ${controllerUrl} (${reason}); ${again}`);
      else log.warn(`cannot reach the controller at ${controllerUrl}: ${reason}; ${again}`);
      registered = false;
    },
  };
  channel = o.link
    ? o.link(linkOptions)
    : new Channel<AgentToController, ControllerToAgent>({
        ...linkOptions,
        url: `${controllerUrl.replace(/^http/, "ws")}/v1/agent`,
        token: o.clusterKey,
        tls: o.ca === undefined ? undefined : clientTls(o.ca, "controller"),
        frameMax: FRAME_MAX,
      });

  log.info(`node ${o.name} serving steps on ${addr}`, { node: o.name, controller: controllerUrl, cpus: o.cpus, memoryMb: o.memoryMb, gpus: offer.gpus.length, features: o.features });
  return {
    name: o.name,
    addr,
    async stop() {
      if (heartbeat) clearInterval(heartbeat);
      hostStates.stop();
      // Its steps end first (their ranks killed, their shared-memory files removed), while the controller still hears their last reports.
      steps.closeAll();
      channel?.close();
      procs.killAll();
      paths.close();
      if (o.peers) pool.removeLocal(addr);
      else pool.close();
      server.stop(true);
      binDir.remove();
      await containment.removeAll();
    },
  };
}

/** Whom this agent runs jobs as: their users when it is root, else itself. */
function jobsRunAs(): string {
  if (agentIsRoot()) return "job-user";
  // Not os.userInfo(): Bun's says "unknown" where USER is not set (a service, setpriv).
  return currentUser();
}
