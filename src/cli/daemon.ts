/** Flags and helpers shared by the daemon commands (controller, agent, up). */
import { defineArgs } from "./args.ts";
import { availableParallelism, hostname, totalmem } from "node:os";
import { parseHostPort, type HostPort } from "../util/addr.ts";
import { ZodError } from "zod";
import { SAMPLE_INTERVAL } from "../api/elastic-settings.ts";
import { HEARTBEAT, readControllerConfig, type ControllerConfig } from "../roles/controller/config.ts";
import { isPolicy, POLICIES, resolveConfig, type ErsConfig, type PolicyName } from "../sched/config.ts";
import { describeIssues } from "../util/zod.ts";
import { durationFlag, intFlag, numberFlag, UsageError } from "./common.ts";

export function listenFlag(value: string, flag = "--listen"): HostPort {
  const hp = parseHostPort(value);
  if ("error" in hp) throw new UsageError(`${flag}: ${hp.error}`);
  return hp;
}

export const controllerTuning = defineArgs({
  config: { type: "string", description: "JSON configuration file: {scheduler: {policy, interval, upper, lower, window, minSamples, settle, payoff, ...}, limits: {...}, heartbeat, defaultTime, killWait, sampleInterval}; flags override it", valueHint: "FILE" },
  heartbeat: { type: "string", description: "Agent heartbeat interval in seconds; 3 missed make a node DOWN (default 2)", valueHint: "SECONDS" },
  "default-time": { type: "string", description: "Time limit of jobs that give none (default 1:00:00)", valueHint: "TIME" },
  "kill-wait": { type: "string", description: "Seconds between SIGTERM and SIGKILL when a job is cancelled or times out (default 5)", valueHint: "SECONDS" },
  policy: { type: "string", description: `Scheduling policy: ${POLICIES.join(", ")} (default ebb)`, valueHint: "POLICY" },
  "ers-interval": { type: "string", description: "Seconds between elastic scheduling passes (default 60)", valueHint: "SECONDS" },
  upper: { type: "string", description: "MTCT above which an elastic job is halved (default 0.1)", valueHint: "X" },
  lower: { type: "string", description: "MTCT below which an elastic job may double (default 0.01)", valueHint: "X" },
  settle: { type: "string", description: "Seconds after an adaptation before the job may adapt again (default 120)", valueHint: "SECONDS" },
  "min-samples": { type: "string", description: "Timing samples a job needs since its last adaptation before the scheduler acts on it (default 3)", valueHint: "N" },
  payoff: { type: "boolean", description: "Grow a job only if the predicted gain exceeds its adaptation cost (default on; --no-payoff turns it off)" },
  "sample-interval": { type: "string", description: "Seconds between elastic jobs' timing samples, unless a job sets its own (default 60)", valueHint: "SECONDS" },
});

type TuningArgs = { [K in keyof typeof controllerTuning]?: K extends "payoff" ? boolean : string };

/** Controller options from the config file and the flags (flags win). */
export function tuning(a: TuningArgs) {
  let file: ControllerConfig = {};
  if (a.config) {
    try {
      file = readControllerConfig(a.config);
    } catch (e) {
      throw new UsageError(`--config ${(e as Error).message}`);
    }
  }
  const hb = numberFlag(a.heartbeat, "--heartbeat", HEARTBEAT) ?? file.heartbeat;
  if (a.policy !== undefined && !isPolicy(a.policy)) throw new UsageError(`--policy ${a.policy}: expected one of ${POLICIES.join(", ")}`);
  const scheduler: Partial<ErsConfig> = { ...file.scheduler };
  const set = <K extends keyof ErsConfig>(k: K, v: ErsConfig[K] | undefined) => {
    if (v !== undefined) scheduler[k] = v;
  };
  set("policy", a.policy as PolicyName | undefined);
  set("interval", numberFlag(a["ers-interval"], "--ers-interval", { min: 0.05 }));
  set("upper", numberFlag(a.upper, "--upper", { min: 0 }));
  set("lower", numberFlag(a.lower, "--lower", { min: 0 }));
  set("settle", numberFlag(a.settle, "--settle", { min: 0 }));
  set("minSamples", intFlag(a["min-samples"], "--min-samples"));
  set("payoff", a.payoff);
  try {
    resolveConfig(scheduler);
  } catch (e) {
    throw new UsageError(`scheduler settings: ${e instanceof ZodError ? describeIssues(e) : (e as Error).message}`);
  }
  const killWait = a["kill-wait"] === undefined ? file.killWait : intFlag(a["kill-wait"], "--kill-wait", { min: 0 });
  return {
    heartbeatMs: hb === undefined ? undefined : Math.round(hb * 1000),
    defaultTimeLimit: durationFlag(a["default-time"], "--default-time") ?? file.defaultTime,
    killWaitMs: killWait === undefined ? undefined : killWait * 1000,
    sampleInterval: numberFlag(a["sample-interval"], "--sample-interval", SAMPLE_INTERVAL) ?? file.sampleInterval,
    scheduler,
    limits: file.limits,
  };
}

export function localCpus(): number {
  return availableParallelism();
}

export function localMemoryMb(): number {
  return Math.floor(totalmem() / (1 << 20));
}

export function shortHostname(): string {
  return hostname().split(".")[0] || "node";
}

/** Resolves when the process gets SIGINT or SIGTERM. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
}
