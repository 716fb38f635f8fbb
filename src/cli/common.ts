/** What every client command shares: finding the controller and token, flag checks, output. */
import { defineArgs } from "./args.ts";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ApiClient, ApiClientError } from "../api/client.ts";
import { ElasticSettings, SAMPLE_INTERVAL } from "../api/elastic-settings.ts";
import { parseDuration } from "../util/time.ts";
import { err, out } from "../util/stdio.ts";

/** A user mistake: printed as one line, exit status 2. */
export class UsageError extends Error {}

/** The command cannot go on, for a reason its message gives the user: one line, exit status 1. */
export class CommandError extends Error {}

export function defaultStateDir(): string {
  return process.env.EBB_STATE_DIR || join(homedir(), ".ebb");
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8").trim() || undefined : undefined;
}

export const controllerArgs = defineArgs({
  controller: { type: "string", description: "Controller URL (default: $EBB_CONTROLLER, else the one in the state dir, else http://127.0.0.1:7700)", valueHint: "URL" },
  "state-dir": { type: "string", description: "Where the controller keeps its token (default: $EBB_STATE_DIR or ~/.ebb)", valueHint: "DIR" },
});

export function client(args: { controller?: string; "state-dir"?: string }): ApiClient {
  const stateDir = args["state-dir"] ?? defaultStateDir();
  // An empty variable counts as unset, as EBB_STATE_DIR's does.
  const url = (args.controller ?? (process.env.EBB_CONTROLLER || readIfExists(join(stateDir, "controller.url"))) ?? "http://127.0.0.1:7700").replace(/\/+$/, "");
  if (!/^https?:\/\//.test(url)) throw new UsageError(`--controller ${url}: expected a URL such as http://host:7700`);
  const token = process.env.EBB_TOKEN || readIfExists(join(stateDir, "token"));
  if (!token) throw new UsageError(`no API token: set EBB_TOKEN, or run where the controller's state dir (${stateDir}) is readable (--state-dir)`);
  return new ApiClient(url, token);
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
  "sample-interval": { type: "string", description: "Elastic jobs: seconds between the ranks' timing samples (default: the controller's, 60)", valueHint: "SECONDS" },
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

export function elasticFields(a: { elastic?: boolean; "min-nodes"?: string; "max-nodes"?: string; "sample-interval"?: string; "elastic-settings"?: string }) {
  const seconds = numberFlag(a["sample-interval"], "--sample-interval", SAMPLE_INTERVAL);
  const minNodes = intFlag(a["min-nodes"], "--min-nodes");
  const maxNodes = intFlag(a["max-nodes"], "--max-nodes");
  return { elastic: a.elastic === true ? true : undefined, minNodes, maxNodes, sampleInterval: seconds, elasticSettings: parseElasticSettings(a["elastic-settings"]) };
}

export function jobIdArg(value: string | undefined): number {
  const id = intFlag(value, "JOBID");
  if (id === undefined) throw new UsageError("give a job id, e.g. `ebb show 12`");
  return id;
}

/** The environment as a plain record (what jobs inherit, like sbatch --export=ALL). */
export function currentEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) env[k] = v;
  return env;
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
