/** What every client command shares: finding the controller and token, flag checks, output. */
import { parseSizesSpec } from "../sched/sizes.ts";
import { defineArgs } from "./command.ts";
import { existsSync, readFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { ApiClient, ApiClientError, type TrustedCa } from "../api/client.ts";
import { JOB_STATES } from "../domain/job.ts";
import { readPem } from "../util/tls.ts";
import { ElasticSettings, SAMPLE_INTERVAL } from "../proto/elastic-settings.ts";
import { parseDuration } from "../util/time.ts";
import { expandHostlist } from "../util/hostlist.ts";
import { SLURM_JOB_VARS } from "../roles/slurm-env.ts";
import { currentUmask, UMASK_VAR } from "../roles/job-umask.ts";
import { parseWhen } from "../util/when.ts";
import { err, out } from "../util/stdio.ts";

import { CommandError, UsageError } from "./errors.ts";
export { CommandError, UsageError };

export function defaultStateDir(): string {
  return process.env.EBB_STATE_DIR || join(homedir(), ".ebb");
}

/** The trimmed file, or undefined when it is missing or empty; one the user may not read is a usage error that says `instead`. */
function readIfExists(path: string, instead: string): string | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch (e) {
    // A user other than the cluster's owner, with its state dir named (EBB_STATE_DIR): the files there are 0600.
    if ((e as NodeJS.ErrnoException).code === "EACCES") throw new UsageError(`cannot read ${path} (permission denied): ${instead}`);
    throw e;
  }
}

export const controllerArgs = defineArgs({
  controller: { type: "string", description: "Controller URL (default: $EBB_CONTROLLER, else the one in the state dir, else http://127.0.0.1:7700)", valueHint: "URL" },
  "state-dir": { type: "string", description: "Where the controller keeps its token (default: $EBB_STATE_DIR or ~/.ebb)", valueHint: "DIR" },
  ca: { type: "string", description: "With an https:// controller: the cluster CA its certificate must be signed by (default: $EBB_CA, else ca.pem in the state dir)", valueHint: "FILE" },
});

/**
 * The CA an https:// controller's certificate is checked against: --ca, else $EBB_CA, else the
 * state dir's ca.pem (what ebb up --tls writes); none found is an error saying where to get it.
 */
export function trustedCa(url: string, args: { ca?: string; "state-dir"?: string }): TrustedCa | undefined {
  if (!url.startsWith("https:")) return undefined;
  const stateDir = args["state-dir"] ?? defaultStateDir();
  const path = args.ca ?? (process.env.EBB_CA || (existsSync(join(stateDir, "ca.pem")) ? join(stateDir, "ca.pem") : undefined));
  if (path === undefined)
    throw new UsageError(`the controller at ${url} uses TLS and no cluster CA was found to check its certificate: give it with --ca FILE or EBB_CA (ebb up --tls writes it to STATE_DIR/ca.pem; looked in ${stateDir})`);
  try {
    return { pem: readPem(path, args.ca !== undefined ? "--ca" : process.env.EBB_CA ? "EBB_CA" : "the state dir's CA", "CERTIFICATE"), path };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function client(args: { controller?: string; "state-dir"?: string; ca?: string }): ApiClient {
  const stateDir = args["state-dir"] ?? defaultStateDir();
  // An empty variable counts as unset, as EBB_STATE_DIR's does.
  const url = (args.controller ?? (process.env.EBB_CONTROLLER || readIfExists(join(stateDir, "controller.url"), "give the controller with --controller URL or EBB_CONTROLLER")) ?? "http://127.0.0.1:7700").replace(/\/+$/, "");
  if (!/^https?:\/\//.test(url)) throw new UsageError(`--controller ${url}: expected a URL such as http://host:7700`);
  const token = process.env.EBB_TOKEN || readIfExists(join(stateDir, "token"), "set EBB_TOKEN to your own token (an admin issues it: ebb token create --user NAME)");
  if (!token) throw new UsageError(`no API token: set EBB_TOKEN, or run where the controller's state dir (${stateDir}) is readable (--state-dir)`);
  return new ApiClient(url, token, trustedCa(url, args));
}

/** --state S,...: job states, checked, without repeats (so that a query stays short); undefined when not given. */
export function statesFlag(value: string | undefined, flag = "--state"): string | undefined {
  if (value === undefined) return undefined;
  const states = [...new Set(value.split(",").map((s) => s.trim().toUpperCase()).filter(Boolean))];
  const bad = states.find((s) => !(JOB_STATES as readonly string[]).includes(s));
  if (bad !== undefined) throw new UsageError(`${flag} ${bad.length > 40 ? `${bad.slice(0, 40)}...` : bad}: expected some of ${JOB_STATES.join(", ")}`);
  return states.length > 0 ? states.join(",") : undefined;
}

/** A text flag of at most `max` characters (what the API takes), or a usage error saying so. */
export function textFlag(value: string | undefined, flag: string, max: number, what: string): string | undefined {
  if (value !== undefined && value.length > max) throw new UsageError(`${flag}: ${value.length} characters; ${what} have at most ${max}`);
  return value;
}

export function intFlag(value: string | undefined, flag: string, opts: { min?: number; max?: number } = {}): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  const min = opts.min ?? 1;
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new UsageError(`${flag} ${value}: expected a whole number`);
  if (n < min) throw new UsageError(`${flag} ${value}: must be at least ${min}`);
  if (opts.max !== undefined && n > opts.max) throw new UsageError(`${flag} ${value}: must be at most ${opts.max}`);
  return n;
}

/** A decimal number flag: `above` is an exclusive lower bound, `min` and `max` inclusive ones. */
export function numberFlag(value: string | undefined, flag: string, opts: { min?: number; max?: number; above?: number } = {}): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!/^[+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value.trim()) || !Number.isFinite(n)) throw new UsageError(`${flag} ${value}: expected a number`);
  if (opts.min !== undefined && n < opts.min) throw new UsageError(`${flag} ${value}: must be at least ${opts.min}`);
  if (opts.above !== undefined && n <= opts.above) throw new UsageError(`${flag} ${value}: must be more than ${opts.above}`);
  if (opts.max !== undefined && n > opts.max) throw new UsageError(`${flag} ${value}: must be at most ${opts.max}`);
  return n;
}

/**
 * A job's --time: a duration, or Slurm's no limit of its own (0, UNLIMITED, INFINITE), which the
 * controller bounds by the partition's maxTime (API timeLimit "UNLIMITED").
 */
export function timeLimitFlag(value: string | undefined, flag: string): number | "UNLIMITED" | undefined {
  if (value !== undefined && (/^(unlimited|infinite)$/i.test(value.trim()) || parseDuration(value) === 0)) return "UNLIMITED";
  return durationFlag(value, flag);
}

export function durationFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const d = parseDuration(value);
  if (typeof d !== "number") throw new UsageError(`${flag}: ${d.error}`);
  if (d <= 0) throw new UsageError(`${flag} ${value}: must be longer than 0 seconds`);
  return d;
}

/** --elastic --min-nodes A --max-nodes B --sample-interval S, shared by run and submit. */
export const elasticArgs = defineArgs({
  elastic: { type: "boolean", description: "The job can be grown and shrunk while it runs (its ranks use ebb/comm's adaptation window)" },
  "min-nodes": { type: "string", description: "Fewest nodes: the job may start with as few, and is never shrunk below", valueHint: "N" },
  "max-nodes": { type: "string", description: "Most nodes the job may grow to", valueHint: "N" },
  sizes: { type: "string", description: "The node counts the job can run at: a list such as 1,4,9,16, or square (every square in its range); the scheduler starts and resizes it only at those", valueHint: "N,..|square" },
  "sample-interval": { type: "string", description: "Seconds between the ranks' timing and CFG samples, for every monitored job, elastic or not (default: the controller's, 60)", valueHint: "SECONDS" },
  "elastic-settings": {
    type: "string",
    description: "Elastic jobs: the job's own scheduler settings, e.g. upper=0.2,lower=0.005,settle=30,payoff=no (keys: upper, lower, window, minSamples, settle, payoff); the controller clamps them to its limits",
    valueHint: "K=V,...",
  },
});

/** --elastic-settings upper=0.2,payoff=no: validated by the API's schema, so errors name the key. */
export function parseElasticSettings(text: string | undefined): ElasticSettings | undefined {
  if (text === undefined) return undefined;
  const raw: Record<string, number | boolean> = {};
  for (const part of text.split(",").filter((p) => p.trim() !== "")) {
    const eq = part.indexOf("=");
    if (eq < 0) throw new UsageError(`--elastic-settings: "${part}" is not KEY=VALUE (e.g. upper=0.2)`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "payoff") {
      if (!/^(yes|no|true|false|on|off)$/.test(value)) throw new UsageError(`--elastic-settings: payoff=${value}: expected yes or no`);
      raw[key] = /^(yes|true|on)$/.test(value);
    } else raw[key] = value === "" ? Number.NaN : Number(value);
  }
  const r = ElasticSettings.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new UsageError(`--elastic-settings: ${i.path.join(".") || "settings"}: ${i.code === "unrecognized_keys" ? `unknown key ${i.keys.join(", ")} (keys: ${Object.keys(ElasticSettings.unwrap().shape).join(", ")})` : i.message}`);
  }
  return r.data;
}

export function elasticFields(a: { elastic?: boolean; "min-nodes"?: string; "max-nodes"?: string; sizes?: string; "sample-interval"?: string; "elastic-settings"?: string }) {
  const seconds = numberFlag(a["sample-interval"], "--sample-interval", SAMPLE_INTERVAL);
  const minNodes = intFlag(a["min-nodes"], "--min-nodes");
  const maxNodes = intFlag(a["max-nodes"], "--max-nodes");
  return { elastic: a.elastic === true ? true : undefined, minNodes, maxNodes, sizes: sizesFlag(a.sizes), sampleInterval: seconds, elasticSettings: parseElasticSettings(a["elastic-settings"]) };
}

/** --sizes 1,4,9,16 or --sizes square (the controller checks them against the job's range). */
export function sizesFlag(text: string | undefined): "square" | number[] | undefined {
  if (text === undefined) return undefined;
  const spec = parseSizesSpec(text);
  if (spec === undefined) throw new UsageError(`--sizes ${text}: expected node counts such as 1,4,9,16, or square`);
  if (spec !== "square" && spec.some((n) => n < 1)) throw new UsageError(`--sizes ${text}: a size is at least 1 node`);
  return spec;
}

/** A job id as users write it: 12, or 12_3 for task 3 of array 12 (checked, passed on as text). */
export function jobRefArg(value: string): string {
  if (!/^\d+(_\d+)?$/.test(value) || Number(value.split("_")[0]) < 1) throw new UsageError(`"${value}" is not a job id such as 12, or an array task such as 12_3`);
  return value;
}

export function jobIdArg(value: string | undefined): number {
  const id = intFlag(value, "JOBID");
  if (id === undefined) throw new UsageError("give a job id, e.g. `ebb show 12`");
  return id;
}

/** Variables that describe the job (or step, or rank) a command runs in: a job submitted from there does not inherit them. */
const JOB_VARS = /^(EBB_(JOB_\w+|ARRAY_\w+|SUBMIT_DIR|TOKEN|NTASKS|NODELIST|NNODES|NODENAME|NODEID|PROCID|LOCALID|STEP_ID)|PMI_\w+)$/;

/** The environment as a plain record (what jobs inherit, like sbatch --export=ALL), without the variables (ebb's and Slurm's) of a job it runs in. */
export function currentEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !JOB_VARS.test(k) && !SLURM_JOB_VARS.test(k)) env[k] = v;
  return env;
}

/**
 * What Slurm's sbatch in a job passes on to the job it submits of its own job's variables (Slurm
 * 22.05 side by side): all of them, the new job's own values set over them, so that a job submitted
 * by an array task still sees SLURM_ARRAY_TASK_ID, and one by a job of 3 tasks SLURM_NTASKS=3 when
 * it asks for no count. But the memory amounts, which Slurm's new job sets anew (its DefMemPerCPU;
 * ebb's when it asks), a step's variables, and SLURM_CPUS_PER_TASK, which reads 1 in a new job that
 * asks for no -c. Empty outside a job.
 */
export function parentSlurmVars(): Record<string, string> {
  if (process.env.SLURM_JOB_ID === undefined) return {};
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && SLURM_JOB_VARS.test(k) && !/^SLURM_(STEP_\w+|STEPID|MEM_PER_\w+)$/.test(k)) env[k] = v;
  if (process.env.SLURM_CPUS_PER_TASK !== undefined) env.SLURM_CPUS_PER_TASK = "1";
  return env;
}

/** Whether an --export spec passes the environment on (ALL, alone or with variables). */
export const exportsAll = (spec: string | undefined) => spec === undefined || spec.split(",").some((s) => s.trim() === "ALL");

/**
 * sbatch --export: ALL (the default), NONE, or VAR and VAR=value items, with ALL among them to add
 * to everything. As sbatch, SLURM_SUBMIT_HOST (this host's name) is added whatever the spec.
 */
export function exportEnv(spec: string | undefined): Record<string, string> {
  return { ...exported(spec), SLURM_SUBMIT_HOST: hostname(), [UMASK_VAR]: currentUmask() };
}

/** --export of a step inside a job: as exportEnv, but a step keeps its job's SLURM_SUBMIT_HOST (srun's). */
export function stepEnv(spec: string | undefined): Record<string, string> {
  const host = process.env.SLURM_SUBMIT_HOST;
  return { ...exported(spec), ...(host !== undefined ? { SLURM_SUBMIT_HOST: host } : {}), [UMASK_VAR]: currentUmask() };
}

function exported(spec: string | undefined): Record<string, string> {
  if (spec === undefined || spec === "ALL") return currentEnv();
  const items = spec.split(",").map((s) => s.trim()).filter(Boolean);
  const env: Record<string, string> = items.includes("ALL") ? currentEnv() : {};
  for (const item of items) {
    if (item === "ALL" || item === "NONE") continue;
    const eq = item.indexOf("=");
    const name = eq < 0 ? item : item.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--export: "${item}" is not ALL, NONE, VAR or VAR=value`);
    const value = eq < 0 ? process.env[name] : item.slice(eq + 1);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** --open-mode: truncate or append, checked. */
export function openModeFlag(value: string | undefined, flag: string): "truncate" | "append" | undefined {
  if (value === undefined || value === "truncate" || value === "append") return value;
  throw new UsageError(`${flag} ${value}: expected truncate or append`);
}

/** node[01-03],node07 -> the names; undefined when not given. */
export function hostlistFlag(value: string | undefined, flag: string): string[] | undefined {
  if (value === undefined) return undefined;
  const names = expandHostlist(value);
  if ("error" in names) throw new UsageError(`${flag}: ${names.error}`);
  if (names.length === 0) throw new UsageError(`${flag}: no node names in "${value}"`);
  return names;
}

/** A time as sbatch --begin and sacct --starttime take it, as an ISO string. */
export function whenFlag(value: string | undefined, flag: string, opts: { future?: boolean } = {}): string | undefined {
  if (value === undefined) return undefined;
  const t = parseWhen(value, Date.now(), opts);
  if (typeof t !== "number") throw new UsageError(`${flag}: ${t.error}`);
  return new Date(t).toISOString();
}

export function printJson(value: unknown): void {
  out(`${JSON.stringify(value, null, 2)}\n`);
}

export { table } from "../util/table.ts";

/** Runs a command body, turning expected failures into one-line errors and exit codes. */
export async function guard(cmd: string, body: () => Promise<number | void>): Promise<never> {
  try {
    const code = await body();
    process.exit(code ?? 0);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`ebb ${cmd}: ${e.message}\n`);
      process.exit(2);
    }
    if (e instanceof ApiClientError || e instanceof CommandError) {
      err(`ebb ${cmd}: ${e.message}${e instanceof ApiClientError && e.field ? ` (field: ${e.field})` : ""}\n`);
      process.exit(1);
    }
    throw e;
  }
}
