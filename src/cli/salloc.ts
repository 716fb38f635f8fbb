/**
 * `ebb salloc`, Slurm's salloc: an allocation, then a command in it (default: the user's shell),
 * run here with the job's SLURM_* variables (`salloc-env.ts`) and ebb's Slurm commands first on
 * PATH, so that its srun runs steps in the allocation, as Slurm's does. The allocation is a batch
 * job whose shell only holds it; when the command ends salloc relinquishes it, the job ending with
 * the command's status (POST /v1/jobs/:id/complete, as Slurm's salloc completes its job), and exits
 * with that status. Flags are sbatch's (as
 * `ebb sbatch` reads them: the ones ebb lacks take their fates, unknown ones are refused), but
 * those of a batch script's files and arrays, which salloc does not have either.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { ApiClient } from "../api/client.ts";
import type { JobView } from "../api/schemas.ts";
import { defineArgs, defineCommand, parse } from "./command.ts";
import { client, controllerArgs, guard, UsageError } from "./common.ts";
import { sbatchOnlyFlag, sharedByUser } from "./directives.ts";
import { sallocEnvWords } from "./sbatch-env.ts";
import { partitionChoice } from "./partition-choice.ts";
import { SALLOC_MARK, sallocEnv } from "./salloc-env.ts";
import { jobArgs, jobSubmit } from "./submit.ts";
import { writeSlurmCommands } from "../roles/agent/ebb-command.ts";
import { SLURM_JOB_VARS } from "../roles/slurm-env.ts";
import { err } from "../util/stdio.ts";

/** sbatch's flags that salloc has not: a batch script's files, arrays, requeues. */
const NOT_SALLOC = new Set(["output", "error", "open-mode", "array", "requeue"]);
/** Those flags as written: -o, --output... */
const BATCH_ONLY = new Set(
  Object.entries(jobArgs)
    .filter(([k]) => NOT_SALLOC.has(k))
    .flatMap(([k, def]) => [`--${k}`, ...[(def as { alias?: string | string[] }).alias ?? []].flat().map((a) => (a.length === 1 ? a : `--${a}`))]),
);
const args = defineArgs({
  ...Object.fromEntries(Object.entries(jobArgs).filter(([k]) => !NOT_SALLOC.has(k))),
  ...controllerArgs,
  command: { type: "positional", description: "The command to run in the allocation, and its arguments (default: $SHELL)" },
} as typeof jobArgs & typeof controllerArgs & { command: { type: "positional"; description: string } });

/** The allocation's batch shell: it holds the job until salloc completes it. */
const HOLD = "#!/bin/sh\nwhile :; do sleep 3600 & wait $!; done\n";

export default defineCommand({
  meta: { name: "salloc", description: "salloc: an allocation, and a command in it (default: your shell) with the job's SLURM_* variables; srun in it runs steps there. It ends with the command.", hidden: true },
  args,
  stopAtPositional: true,
  ownParser: true,
  run: ({ raw }) =>
    guard("salloc", async () => {
      const ignored: string[] = [];
      const sbatchOnly = sbatchOnlyFlag(ignored, "command line");
      const onUnknown = (flag: string, rest: readonly string[]) => {
        const name = /^-(-?)([^=]+)/.exec(flag);
        if (name && BATCH_ONLY.has(name[1] ? `--${name[2]}` : name[2]![0]!)) throw new UsageError(`${flag.replace(/=.*$/, "")}: salloc has no such flag (sbatch's, for a batch script's files, arrays and requeues)`);
        return sbatchOnly(flag, rest);
      };
      const fromEnv = sallocEnvFlags(ignored);
      const given = parse("salloc", args, raw, { stopAtPositional: true, onUnknown });
      // SALLOC_* lose to the command line, as salloc's input variables do.
      const cli = { ...fromEnv, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) } as typeof given;
      if (ignored.length > 0) err(`salloc: warning: ignoring flags ebb does not have: ${ignored.join(", ")}\n`);
      const command = cli._.length > 0 ? cli._ : [process.env.SHELL || "/bin/sh"];
      // Named "interactive" unless -J, as Slurm 22.05's salloc names it whatever the command.
      const base = jobSubmit(cli as Record<string, unknown>, HOLD, "interactive", "SBATCH");
      const req = { ...base, output: "/dev/null", env: { ...base.env, [SALLOC_MARK]: "1" } };
      const api = client(cli);
      req.partition = await partitionChoice(api, req.partition, (text) => err(`salloc: warning: ${text}\n`));
      const { id } = await api.submit(req);
      const job = await granted(api, id);
      if (!job) return 1;
      return runIn(api, job, command);
    }),
});

/** salloc's input variables set here (SALLOC_TIMELIMIT, SALLOC_PARTITION...), read as command-line flags; errors name the variable. */
function sallocEnvFlags(ignored: string[]): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (const { name, word } of sallocEnvWords(process.env)) {
    try {
      if (sharedByUser(word, name, ignored)) continue;
      const parsed = parse("salloc", args, [word], { stopAtPositional: true, onUnknown: sbatchOnlyFlag(ignored, name) });
      for (const [k, v] of Object.entries(parsed)) if (v !== undefined && k !== "_") flags[k] = v;
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${name}: ${e.message}`);
      throw e;
    }
  }
  return flags;
}

/** The job once it runs (saying so as salloc does), or undefined if it ended first. */
async function granted(api: ApiClient, id: number): Promise<JobView | undefined> {
  let said = false;
  for (let polls = 0; ; polls++) {
    const job = await api.job(id);
    if (job.state !== "PENDING") {
      if (job.endTime !== null) {
        err(`salloc: error: Job allocation ${id} has been revoked.\n`);
        return undefined;
      }
      if (said) err(`salloc: job ${id} has been allocated resources\n`);
      err(`salloc: Granted job allocation ${id}\n`);
      return job;
    }
    // A job the next pass starts is granted at once, as Slurm's immediate grant prints nothing else.
    if (!said && polls >= 4) {
      err(`salloc: Pending job allocation ${id}\nsalloc: job ${id} queued and waiting for resources\n`);
      said = true;
    }
    await Bun.sleep(250);
  }
}

/** Runs `command` in the allocation; ends the allocation after it. Its exit status. */
async function runIn(api: ApiClient, job: JobView, command: string[]): Promise<number> {
  const bin = mkdtempSync(join(tmpdir(), "ebb-salloc-"));
  writeSlurmCommands(bin);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !SLURM_JOB_VARS.test(k))) as Record<string, string>;
  const cluster = (await api.health().catch(() => undefined))?.clusterName;
  const env = { ...inherited, ...sallocEnv(job, hostname(), cluster), PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(command, { env, stdio: ["inherit", "inherit", "inherit"] });
  } catch (e) {
    rmSync(bin, { recursive: true, force: true });
    await api.cancel(job.id).catch(() => undefined);
    throw new UsageError(`${command[0]}: ${(e as Error).message}`);
  }
  // salloc's own SIGINT goes to the command through the terminal; SIGTERM and SIGHUP end the allocation.
  const ignore = () => undefined;
  const end = () => proc.kill("SIGHUP");
  process.on("SIGINT", ignore);
  process.on("SIGTERM", end);
  process.on("SIGHUP", end);
  let revoked = false;
  const watch = (async () => {
    while (proc.exitCode === null && proc.signalCode === null) {
      const j = await api.job(job.id, undefined, 30).catch(() => undefined);
      if (j?.endTime != null && proc.exitCode === null && proc.signalCode === null) {
        revoked = true;
        err(`salloc: Job allocation ${job.id} has been revoked.\n`);
        proc.kill("SIGHUP");
        return;
      }
    }
  })();
  const code = await proc.exited;
  rmSync(bin, { recursive: true, force: true });
  const status = proc.signalCode ? 128 + (SIGNAL_NUMBERS[proc.signalCode] ?? 1) : code;
  if (!revoked) {
    err(`salloc: Relinquishing job allocation ${job.id}\n`);
    // The job keeps the command's status (sacct ExitCode), as Slurm's salloc job does.
    await api.complete(job.id, Math.min(255, status)).catch(() => api.cancel(job.id).catch(() => undefined));
  }
  void watch;
  return status;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
