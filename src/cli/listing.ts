/** What `ebb queue` and `ebb history` share beyond common.ts: their filters of users, partitions and job ids, --format, --noheader. */
import type { ApiClient, JobQuery } from "../api/client.ts";
import { MAX_LIST_IDS, MAX_LIST_PARTITIONS, MAX_USER, PartitionName, type JobView } from "../api/schemas.ts";
import { currentUser } from "../util/user.ts";
import { UsageError } from "./errors.ts";
import { parseFormat, type Format } from "./job-format.ts";

/** The most users one --user may name (one request each). */
const MAX_USERS = 100;

/** --user A,B (or --me: this process's user); undefined: everyone's. */
export function usersFlag(value: string | undefined, me: boolean | undefined, flag: string): string[] | undefined {
  if (value !== undefined && me) throw new UsageError(`--me and ${flag}: give one`);
  if (me) return [currentUser()];
  if (value === undefined) return undefined;
  const users = [...new Set(value.split(",").map((u) => u.trim()).filter(Boolean))];
  if (users.length === 0) throw new UsageError(`${flag}: no user names in "${value}"`);
  if (users.length > MAX_USERS) throw new UsageError(`${flag}: ${users.length} users; at most ${MAX_USERS}`);
  const long = users.find((u) => u.length > MAX_USER);
  if (long !== undefined) throw new UsageError(`${flag}: ${long.length} characters; user names have at most ${MAX_USER}`);
  return users;
}

/** --partition gpu,debug (checked, passed on as text); undefined when not given. */
export function partitionsFlag(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const names = [...new Set(value.split(",").map((s) => s.trim()).filter(Boolean))];
  if (names.length === 0) throw new UsageError(`${flag}: no partition names in "${value}"; ebb partitions lists them`);
  const bad = names.find((n) => !PartitionName.safeParse(n).success);
  if (bad !== undefined) throw new UsageError(`${flag}: "${bad.slice(0, 70)}" is not a partition name (letters, digits, '_', '.' or '-', at most 64); ebb partitions lists them`);
  if (names.length > MAX_LIST_PARTITIONS) throw new UsageError(`${flag}: ${names.length} partitions; at most ${MAX_LIST_PARTITIONS}`);
  return names.join(",");
}

/** --jobs 12,14 (checked, passed on as text); undefined when not given. */
export function idsFlag(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const ids = [...new Set(value.split(",").map((s) => s.trim()).filter(Boolean))];
  const bad = ids.find((id) => !/^[1-9]\d{0,15}$/.test(id));
  if (bad !== undefined) throw new UsageError(`${flag}: "${bad.slice(0, 40)}" is not a job id; give ids such as 12,14 (an array's id stands for its tasks)`);
  if (ids.length === 0) throw new UsageError(`${flag}: no job ids in "${value}"`);
  if (ids.length > MAX_LIST_IDS) throw new UsageError(`${flag}: ${ids.length} job ids; at most ${MAX_LIST_IDS}`);
  return ids.join(",");
}

export function formatFlag(value: string, flag: string): Format {
  const f = parseFormat(value);
  if ("error" in f) throw new UsageError(`${flag}: ${f.error}`);
  return f;
}

/** The jobs of `query`, of each of `users` (all when undefined), in id order, the newest `max` of them. */
export async function jobsOf(api: ApiClient, query: JobQuery, users: readonly string[] | undefined, max?: number): Promise<JobView[]> {
  if (users === undefined) return api.allJobs(query, max);
  const jobs: JobView[] = [];
  for (const user of users) jobs.push(...(await api.allJobs({ ...query, user }, max)));
  jobs.sort((a, b) => a.id - b.id);
  return max === undefined ? jobs : jobs.slice(-max);
}

/** A table's text without its header line, unless `header`. */
export function headed(text: string, header: boolean): string {
  return header ? text : text.slice(text.indexOf("\n") + 1);
}
