/** Flags and helpers shared by the daemon commands (controller, agent, up). */
import { defineArgs } from "./command.ts";
import { hostname } from "node:os";
import { join } from "node:path";
import { formatHostPort, parseHostPort, type HostPort } from "../util/addr.ts";
import { DatabaseTooNew } from "../store/db.ts";
import { StateDirHeld } from "../roles/controller/lock.ts";
import { ZodError } from "zod";
import { SAMPLE_INTERVAL } from "../proto/elastic-settings.ts";
import { DEFAULT_ARRAY_TASKS, MAX_ARRAY_TASKS } from "../domain/array.ts";
import { DEFAULT_MAX_JOB_COUNT, MAX_JOB_COUNT } from "../sched/quota.ts";
import { ADAPT_REPORT_GRACE, ADAPT_TIMEOUT, HEARTBEAT, readControllerConfig, type ControllerConfig } from "../roles/controller/config.ts";
import { resolvePriority } from "../sched/priority.ts";
import { isPolicy, POLICIES, resolveConfig, type ErsConfig, type PolicyName } from "../sched/config.ts";
import { describeIssues } from "../util/zod.ts";
import { LOG_FORMATS, setLogFormat, type LogFormat } from "../util/log.ts";
import { readFileSync } from "node:fs";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readPem, type ServerTls } from "../util/tls.ts";
import { parseMemory } from "../domain/resources.ts";
import { MAX_MEM_MIB } from "../api/schemas.ts";
import { CommandError, durationFlag, intFlag, numberFlag, UsageError } from "./common.ts";

/**
 * Runs a daemon's start-up; what commonly stops one (a port in use, a state dir it cannot write,
 * a database that is not one, or is newer than this ebb) becomes one line saying what to do.
 */
export async function starting<T>(where: { listen: HostPort; stateDir: string; db?: string }, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (e) {
    const why = explainStartup(e, where);
    if (why) throw new CommandError(why);
    throw e;
  }
}

function explainStartup(e: unknown, where: { listen: HostPort; stateDir: string; db?: string }): string | undefined {
  if (e instanceof DatabaseTooNew || e instanceof StateDirHeld) return e.message;
  const err = e as NodeJS.ErrnoException;
  const at = formatHostPort(where.listen);
  const db = where.db ?? join(where.stateDir, "ebb.db");
  if (err.code === "EADDRINUSE") return `${at} is in use (another ebb controller or ebb up?); stop that, or listen elsewhere with --listen HOST:PORT`;
  if (err.code === "EADDRNOTAVAIL") return `${where.listen.host} is not an address of this machine; give --listen one of its addresses, or 0.0.0.0`;
  if (err.code === "EACCES" && err.syscall === "listen") return `no permission to listen on ${at}; use a port above 1023`;
  if (/file is not a database|SQLITE_NOTADB/i.test(String(err.message ?? "")) || err.code === "SQLITE_NOTADB") return `${db} is not an SQLite database; give --db another file (or move that one away)`;
  if (err.code === "SQLITE_CANTOPEN" || err.code === "SQLITE_READONLY") return `cannot write the database ${db} (${err.code}); give --db or --state-dir a place you can write`;
  if (["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "ENOSPC", "EISDIR"].includes(err.code ?? ""))
    return `cannot write the state dir ${where.stateDir} (${err.code}${err.path ? ` at ${err.path}` : ""}); give --state-dir a directory you can write`;
  return undefined;
}

export function listenFlag(value: string, flag = "--listen"): HostPort {
  const hp = parseHostPort(value);
  if ("error" in hp) throw new UsageError(`${flag}: ${hp.error}`);
  return hp;
}

export const controllerTuning = defineArgs({
  config: { type: "string", description: "JSON configuration file: {scheduler: {policy, interval, upper, lower, window, minSamples, settle, payoff, ...}, limits: {...}, heartbeat, defaultTime, killWait, sampleInterval, adaptTimeout, adaptReportGrace, privateData: [jobs, nodes, usage], userResizeScalesLimit}; flags override it", valueHint: "FILE" },
  heartbeat: { type: "string", description: "Agent heartbeat interval in seconds; 3 missed make a node DOWN (default 2)", valueHint: "SECONDS" },
  "default-time": { type: "string", description: "Time limit of jobs that give none (default 1:00:00)", valueHint: "TIME" },
  "kill-wait": { type: "string", description: "Seconds between SIGTERM and SIGKILL when a job is cancelled or times out (default 5)", valueHint: "SECONDS" },
  policy: { type: "string", description: `Scheduling policy: ${POLICIES.join(", ")} (default ebb)`, valueHint: "POLICY" },
  "ers-interval": { type: "string", description: "Seconds: the period of the simulator's periodic passes, and the shortest span ebb reads the queue's arrival rate over; live, every pass (each event, and once a second) may resize (default 60)", valueHint: "SECONDS" },
  upper: { type: "string", description: "MTCT above which an elastic job is halved (default 0.1)", valueHint: "X" },
  lower: { type: "string", description: "MTCT below which an elastic job may double (default 0.01)", valueHint: "X" },
  settle: { type: "string", description: "Seconds after an adaptation before the job may adapt again (default 120)", valueHint: "SECONDS" },
  "min-samples": { type: "string", description: "Timing samples a job needs since its last adaptation before the scheduler acts on it (default 3)", valueHint: "N" },
  payoff: { type: "boolean", description: "Grow a job only if the predicted gain exceeds its adaptation cost (default on)", negativeDescription: "Grow jobs without the payoff rule" },
  "sample-interval": { type: "string", description: "Seconds between jobs' timing and CFG samples, unless a job sets its own (default 60)", valueHint: "SECONDS" },
  "adapt-timeout": { type: "string", description: "Seconds an adaptation (resize or fault) may take: the launcher fails one that has not committed by then, each of its rounds included; the controller fails it --adapt-report-grace later if the launcher did not report (default 600)", valueHint: "SECONDS" },
  "adapt-report-grace": { type: "string", description: "Seconds past an adaptation's deadline the controller waits for its launcher's report before it fails the adaptation itself (default 10)", valueHint: "SECONDS" },
  "max-job-count": { type: "string", description: `The most jobs pending or running, an array's tasks each (default ${DEFAULT_MAX_JOB_COUNT}, Slurm's MaxJobCount; one user at most half of them; at most ${MAX_JOB_COUNT})`, valueHint: "N" },
  "max-array-tasks": { type: "string", description: `The most tasks one job array may have (default ${DEFAULT_ARRAY_TASKS}, Slurm's MaxArraySize; at most ${MAX_ARRAY_TASKS})`, valueHint: "N" },
  "keep-history": { type: "string", description: "How long finished jobs are kept for ebb history, e.g. 30d, 12h, 90m, 3600s, or forever (default 30d)", valueHint: "AGE" },
  "def-mem-per-cpu": { type: "string", description: "Memory per core of jobs that ask for none: MiB, or a size such as 2G (default: each node's memory divided by its cores)", valueHint: "SIZE" },
  "metrics-token": { type: "string", description: "File holding a token that may read /metrics (as Prometheus' credentials_file); the API token may too", valueHint: "FILE" },
  "metrics-open": { type: "boolean", description: "Serve /metrics without a token (to a scraper on a trusted network)" },
  ...logArgs(),
});

/** --log-format, which every daemon takes. */
export function logArgs() {
  return defineArgs({
    "log-format": { type: "string", description: "text (default), or json: one object a line with time, level, role, msg and the job/node fields", valueHint: "FORMAT" },
  });
}

/** Applies --log-format to every logger of the process; the format, for agents in other threads. */
export function logFormatFlag(value: string | undefined): LogFormat {
  if (value === undefined) return "text";
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new UsageError(`--log-format ${value}: expected ${LOG_FORMATS.join(" or ")}`);
  setLogFormat(value as LogFormat);
  return value as LogFormat;
}

/** --metrics-token and --metrics-open: who may scrape /metrics. */
function metricsAccess(a: { "metrics-token"?: string; "metrics-open"?: boolean }): { metricsToken?: string; metricsOpen?: boolean } {
  if (a["metrics-open"] && a["metrics-token"]) throw new UsageError("--metrics-open and --metrics-token: give one (open needs no token)");
  if (a["metrics-token"] === undefined) return { metricsOpen: a["metrics-open"] };
  let token: string;
  try {
    token = readFileSync(a["metrics-token"], "utf8").trim();
  } catch (e) {
    throw new UsageError(`--metrics-token ${a["metrics-token"]}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (token.length < 16) throw new UsageError(`--metrics-token ${a["metrics-token"]}: the token in it is shorter than 16 characters`);
  return { metricsToken: token };
}

/** A memory size flag (MiB, or with a K, M, G or T suffix), in MiB. */
function memoryFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const mib = parseMemory(value);
  if (typeof mib !== "number") throw new UsageError(`${flag} ${value}: ${mib.error}`);
  if (mib < 1 || mib > MAX_MEM_MIB) throw new UsageError(`${flag} ${value}: expected 1 MiB to ${MAX_MEM_MIB} MiB (1 PiB)`);
  return mib;
}

/** --keep-history: a number with a unit (s, m, h, d, w; a bare number is days), or forever. Milliseconds. */
export function keepFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === "forever") return Number.POSITIVE_INFINITY;
  const m = /^(\d+(?:\.\d+)?)\s*([smhdw]?)$/.exec(value.trim());
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800, "": 86400 }[m?.[2] ?? ""];
  if (!m || unit === undefined || Number(m[1]) <= 0) throw new UsageError(`--keep-history ${value}: expected an age such as 30d, 12h, 90m, 3600s, or forever`);
  return Number(m[1]) * unit * 1000;
}

type TuningArgs = { [K in keyof typeof controllerTuning]?: K extends "payoff" | "metrics-open" ? boolean : string };

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
  logFormatFlag(a["log-format"]);
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
  const adaptTimeout = numberFlag(a["adapt-timeout"], "--adapt-timeout", ADAPT_TIMEOUT) ?? file.adaptTimeout;
  const adaptReportGrace = numberFlag(a["adapt-report-grace"], "--adapt-report-grace", ADAPT_REPORT_GRACE) ?? file.adaptReportGrace;
  const killWait = a["kill-wait"] === undefined ? file.killWait : intFlag(a["kill-wait"], "--kill-wait", { min: 0 });
  return {
    heartbeatMs: hb === undefined ? undefined : Math.round(hb * 1000),
    defaultTimeLimit: durationFlag(a["default-time"], "--default-time") ?? file.defaultTime,
    killWaitMs: killWait === undefined ? undefined : killWait * 1000,
    sampleInterval: numberFlag(a["sample-interval"], "--sample-interval", SAMPLE_INTERVAL) ?? file.sampleInterval,
    adaptTimeoutMs: adaptTimeout === undefined ? undefined : adaptTimeout * 1000,
    adaptReportGraceMs: adaptReportGrace === undefined ? undefined : adaptReportGrace * 1000,
    scheduler,
    limits: file.limits,
    maxArrayTasks: intFlag(a["max-array-tasks"], "--max-array-tasks", { max: MAX_ARRAY_TASKS }) ?? file.maxArrayTasks,
    maxJobCount: intFlag(a["max-job-count"], "--max-job-count", { min: 2, max: MAX_JOB_COUNT }) ?? file.maxJobCount,
    clusterName: file.clusterName,
    keepHistoryMs: keepFlag(a["keep-history"]) ?? (file.keepHistory === undefined ? undefined : file.keepHistory * 1000),
    privateData: file.privateData,
    userResizeScalesLimit: file.userResizeScalesLimit,
    defMemPerCpu: memoryFlag(a["def-mem-per-cpu"], "--def-mem-per-cpu") ?? file.defMemPerCpu,
    priority: resolvePriority(file.priority),
    partitions: file.partitions,
    userLimits: file.userLimits,
    ...metricsAccess(a),
  };
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

/** Resolves when stdin ends (or fails): the end of the ssh session a daemon was started in (--tied-to-stdin). */
export async function stdinClosed(): Promise<void> {
  try {
    for await (const _ of Bun.stdin.stream()) {
      /* nothing is expected on stdin; it only has to stay open */
    }
  } catch {
    /* a read error is a closed link too */
  }
}

/** --tls-cert / --tls-key of the controller and the agents. */
export const tlsArgs = defineArgs({
  "tls-cert": { type: "string", description: "Serve HTTPS/WSS only, with this certificate (PEM; the chain after it); with --tls-key", valueHint: "FILE" },
  "tls-key": { type: "string", description: "The private key of --tls-cert (PEM)", valueHint: "FILE" },
});

/** The certificate and key of --tls-cert/--tls-key, checked to belong together; undefined without them. */
export function serverTlsFlags(a: { "tls-cert"?: string; "tls-key"?: string }): ServerTls | undefined {
  const certFile = a["tls-cert"];
  const keyFile = a["tls-key"];
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new UsageError(`${certFile === undefined ? "--tls-key" : "--tls-cert"} needs ${certFile === undefined ? "--tls-cert" : "--tls-key"} too`);
  try {
    const cert = readPem(certFile, "--tls-cert", "CERTIFICATE");
    const key = readPem(keyFile, "--tls-key", "PRIVATE KEY");
    let matches: boolean;
    try {
      matches = new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
    } catch (e) {
      throw new Error(`--tls-cert ${certFile} / --tls-key ${keyFile}: cannot be read as a certificate and its key (${(e as Error).message})`);
    }
    if (!matches) throw new Error(`--tls-key ${keyFile} is not the key of --tls-cert ${certFile}`);
    return { cert, key };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
