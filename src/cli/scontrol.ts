/**
 * `scontrol` in an ebb job: the agent puts it beside `srun` on every job process's PATH, for the
 * host-list idiom of Slurm scripts (`scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1`,
 * the first node as MASTER_ADDR). `scontrolShow` (pure) does what scontrol 22.05 does with those
 * words, which need no controller; `show job [ID]` asks the controller (scontrol-job.ts prints
 * it); `requeue ID[,ID...]` puts running batch jobs back in the queue (a time-limit handler's
 * `scontrol requeue $SLURM_JOB_ID`); anything else is refused naming ebb's command for it (a Slurm installed on the host would
 * ask another cluster about another job).
 */
import { defineCommand } from "./command.ts";
import { UsageError } from "./errors.ts";
import { compressHostlist, expandHostlist } from "../util/hostlist.ts";
import { err, out } from "../util/stdio.ts";
import { client, jobRefArg } from "./common.ts";
import { scontrolJobText } from "./scontrol-job.ts";
import { relativeLimit, scontrolUpdate } from "./scontrol-update.ts";
import { adapted } from "./resize.ts";
import { perNode } from "../roles/slurm-env.ts";
import type { ApiClient } from "../api/client.ts";
import { writeFileSync } from "node:fs";

/** scontrol's abbreviations: a word matches `full` when it begins it and is at least `min` letters long, in any case. */
const abbrev = (word: string, full: string, min: number) => word.length >= min && full.startsWith(word.toLowerCase());

/** What `scontrol ARGV` prints (its lines); `env`: the job's, for the default list. */
export function scontrolShow(argv: readonly string[], env: Record<string, string | undefined>): string {
  const [verb, entity, ...lists] = argv;
  const what = entity === undefined ? undefined : abbrev(entity, "hostnames", 5) ? "hostnames" : abbrev(entity, "hostlistsorted", 9) ? "sorted" : abbrev(entity, "hostlist", 5) ? "hostlist" : undefined;
  if (verb === undefined || !abbrev(verb, "show", 3) || what === undefined)
    throw new UsageError(`${argv.join(" ") || "(no command)"}: in an ebb job scontrol does only "show hostnames [LIST]", "show hostlist[sorted] NAMES", "show job [ID]", "requeue ID", "hold ID", "release ID" and "update JobId=ID ..."; ebb show JOBID shows a job in full, ebb nodes the nodes`);
  if (lists.length > 1) throw new UsageError(`show ${entity}: one list, not ${lists.length} (join them with commas)`);
  const list = lists[0] ?? (what === "hostnames" ? env.SLURM_JOB_NODELIST : undefined);
  if (list === undefined) throw new UsageError(what === "hostnames" ? "show hostnames: no list given and SLURM_JOB_NODELIST is not set" : `show ${entity}: give the names`);
  const names = expandHostlist(list);
  if ("error" in names) throw new UsageError(`${list}: ${names.error}`);
  if (what === "hostnames") return names.map((n) => `${n}\n`).join("");
  return `${what === "sorted" ? compressHostlist([...names].sort()) : inOrder(names)}\n`;
}

/** scontrol's unsorted host list: adjacent names of one prefix share brackets, ranges only where numbers follow each other (n3,n1,n2 -> n[3,1-2]). */
function inOrder(names: readonly string[]): string {
  const runs: { prefix: string; width: number; ranges: [number, number][] }[] = [];
  for (const name of names) {
    const m = /^(.*?)(\d+)$/.exec(name);
    const [prefix, width, n] = m ? [m[1]!, m[2]!.length, Number(m[2])] : [name, -1, 0];
    const last = runs.at(-1);
    const range = last?.ranges.at(-1);
    if (width < 0 || !last || last.prefix !== prefix || last.width !== width) runs.push({ prefix, width, ranges: [[n, n]] });
    else if (range![1] + 1 === n) range![1] = n;
    else last.ranges.push([n, n]);
  }
  return runs
    .map(({ prefix, width, ranges }) => {
      if (width < 0) return prefix;
      const pad = (n: number) => String(n).padStart(width, "0");
      const text = ranges.map(([a, b]) => (a === b ? pad(a) : `${pad(a)}-${pad(b)}`)).join(",");
      return ranges.length === 1 && ranges[0]![0] === ranges[0]![1] ? prefix + text : `${prefix}[${text}]`;
    })
    .join(",");
}

/**
 * scontrol's options, anywhere among its words (getopt permutes them): `-o`/`--oneliner` prints a
 * job on one line; `-d`/`--details` (`-dd`), `-Q`/`--quiet`, `-a`/`--all` change nothing ebb shows.
 */
export function scontrolOptions(argv: readonly string[]): { words: string[]; oneLiner: boolean } {
  let oneLiner = false;
  const words: string[] = [];
  for (const w of argv) {
    if (w === "--oneliner" || (/^-[odQa]+$/.test(w) && w.includes("o"))) oneLiner = true;
    else if (!/^(-[dQa]+|--details|--quiet|--all)$/.test(w)) words.push(w);
  }
  return { words, oneLiner };
}

/** `show job [ID]` (default SLURM_JOB_ID): the job from the controller, as scontrol prints it. */
async function showJob(ids: readonly string[], env: Record<string, string | undefined>): Promise<string> {
  if (ids.length > 1) throw new UsageError(`show job: one job id, not ${ids.length}`);
  const id = ids[0] ?? env.SLURM_JOB_ID;
  if (id === undefined) throw new UsageError("show job: no job id given and SLURM_JOB_ID is not set");
  const api = client({});
  const j = await api
    .job(jobRefArg(id))
    .catch((e: Error) => {
      throw new UsageError(`show job ${id}: ${e.message}`);
    });
  const user = j.user ?? "";
  const idOf = (flag: string, arg: string) => Bun.spawnSync(["id", flag, arg], { stderr: "ignore" }).stdout.toString().trim() || "(null)";
  // A job's own token does not see its environment: its submit host is the one in ours.
  const own: Record<string, string> = String(j.id) === env.SLURM_JOB_ID && env.SLURM_SUBMIT_HOST !== undefined ? { SLURM_SUBMIT_HOST: env.SLURM_SUBMIT_HOST } : {};
  const priority = j.state === "PENDING" ? (await api.priorities(j.id).catch(() => undefined))?.jobs.find((p) => p.jobId === j.id)?.priority : undefined;
  return scontrolJobText({ ...j, env: { ...own, ...j.env } }, { uid: idOf("-u", user), group: idOf("-gn", user), gid: idOf("-g", user) }, Date.now(), priority);
}

/**
 * `requeue ID[,ID...]`: each running batch job (an array's id: its running tasks) back in the queue,
 * to start again; `hold`/`release ID[,ID...]`: each pending job held or let go (POST /v1/jobs/:id/hold, /release).
 */
async function eachJob(verb: "requeue" | "hold" | "release", ids: readonly string[]): Promise<void> {
  const list = ids.flatMap((w) => w.split(",")).filter(Boolean);
  if (list.length === 0) throw new UsageError(`${verb}: give the job ids (scontrol ${verb} $SLURM_JOB_ID)`);
  const api = client({});
  for (const id of list)
    await (verb === "requeue" ? api.requeue(jobRefArg(id)) : api.hold(jobRefArg(id), verb === "release")).catch((e: Error) => {
      throw new UsageError(`${verb} ${id}: ${e.message}`);
    });
}

/**
 * `update JobId=ID TimeLimit=... JobName=... Dependency=... NumNodes=... Partition=...` (PATCH
 * /v1/jobs/:id); silent, as scontrol is. A running job's NumNodes=N changes its nodes, as Slurm's
 * scontrol shrinks a job, with Slurm's words and its slurm_job_ID_resize.sh and .csh for the batch
 * shell's SLURM_* after it: a rigid job gives back its last nodes (the controller); an elastic
 * one's is its resize (ebb resize, within its --min-nodes/--max-nodes, grown too), waited for.
 */
async function update(words: readonly string[]): Promise<void> {
  const u = scontrolUpdate(words);
  const api = client({});
  const ref = jobRefArg(u.id);
  const failed = (e: Error) => {
    throw new UsageError(`update JobId=${u.id}: ${e.message}`);
  };
  const job = u.minNodes !== undefined || (u.timeLimit !== undefined && /^[+-]\d+$/.test(u.timeLimit)) ? await api.job(ref).catch(failed) : undefined;
  const running = u.minNodes !== undefined && (job?.state === "RUNNING" || job?.state === "ADAPTING");
  const resize = running && job.elastic;
  if (resize && u.maxNodes !== undefined && u.maxNodes !== u.minNodes) throw new UsageError(`NumNodes=${u.minNodes}-${u.maxNodes}: job ${job.id} is running; give the number of nodes it is to have`);
  const timeLimit = u.timeLimit === undefined ? undefined : /^[+-]\d+$/.test(u.timeLimit) ? relativeLimit(u.timeLimit, job!.timeLimit) : u.timeLimit;
  const rest = { name: u.name, timeLimit, dependency: u.dependency, partition: u.partition, ...(resize ? {} : { minNodes: u.minNodes, maxNodes: u.maxNodes }) };
  if (Object.values(rest).some((v) => v !== undefined)) await api.update(ref, rest).catch(failed);
  if (resize) await resized(api, job.id, u.minNodes!).catch(failed);
  if (running) await resizeScripts(api, job.id);
}

/** A running elastic job resized to `nodes` nodes, waited for. */
async function resized(api: ApiClient, id: number, nodes: number): Promise<void> {
  const r = await api.request<{ adaptationId: number }>("POST", `/v1/jobs/${id}/resize`, { nodes });
  const a = await adapted(api, id, r.adaptationId);
  if (a.state !== "COMMITTED") throw new Error(`the resize to ${nodes} nodes failed: ${a.message}`);
}

/** After a running job's NumNodes=: Slurm's resize scripts in this directory, for the job's nodes now, and its words. */
async function resizeScripts(api: ApiClient, id: number): Promise<void> {
  const job = await api.job(id);
  const list = compressHostlist(job.allocation);
  const cpus = perNode(job.shares.map((s) => s.cpus));
  const file = `slurm_job_${id}_resize`;
  const vars = [["SLURM_NODELIST", `"${list}"`], ["SLURM_JOB_NODELIST", `"${list}"`], ["SLURM_NNODES", String(job.allocation.length)], ["SLURM_JOB_NUM_NODES", String(job.allocation.length)], ["SLURM_JOB_CPUS_PER_NODE", `"${cpus}"`]];
  const unset = ["SLURM_NPROCS", "SLURM_NTASKS", "SLURM_TASKS_PER_NODE"];
  writeFileSync(`${file}.sh`, [...vars.map(([k, v]) => `export ${k}=${v}`), ...unset.map((k) => `unset ${k}`)].join("\n") + "\n");
  writeFileSync(`${file}.csh`, [...vars.map(([k, v]) => `setenv ${k} ${v}`), ...unset.map((k) => `unsetenv ${k}`)].join("\n") + "\n");
  out(`To reset Slurm environment variables, execute\n  For bash or sh shells:  . ./${file}.sh\n  For csh shells:         source ./${file}.csh\n`);
}

export default defineCommand({
  meta: {
    name: "scontrol",
    description: "scontrol inside an ebb job (on every job process's PATH): show hostnames [LIST] (default SLURM_JOB_NODELIST), one name a line; show hostlist NAMES, the compressed list; show job [ID] (default SLURM_JOB_ID), as scontrol prints it; requeue ID, a running batch job back to the queue; hold ID and release ID, a pending job's; update JobId=ID TimeLimit=/JobName=/Dependency=/NumNodes=/Partition=.",
    hidden: true,
  },
  args: { words: { type: "positional", variadic: true, description: "show hostnames [LIST] | show hostlist NAMES | show job [ID]" } },
  stopAtPositional: true,
  ownParser: true,
  run: async ({ raw }) => {
    try {
      const { words, oneLiner } = scontrolOptions(raw);
      const [verb, entity, ...ids] = words;
      if (verb !== undefined && entity !== undefined && abbrev(verb, "show", 3) && (abbrev(entity, "jobs", 3) || entity.toLowerCase() === "jobid")) {
        const text = await showJob(ids, process.env);
        out(oneLiner ? `${text.split("\n").map((l) => l.trim()).filter(Boolean).join(" ")}\n` : text);
      } else if (verb !== undefined && ["requeue", "hold", "release"].includes(verb.toLowerCase())) await eachJob(verb.toLowerCase() as "requeue" | "hold" | "release", words.slice(1));
      else if (verb !== undefined && abbrev(verb, "update", 2)) await update(words.slice(1));
      else out(scontrolShow(words, process.env));
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      err(`scontrol: error: ${e.message}\n`);
      process.exit(1);
    }
  },
});
