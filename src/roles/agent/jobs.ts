/**
 * Jobs whose first node is this one: a batch script run here with its output in a file, or a
 * command launched as step 0 from here (this agent is that step's root, with no extra process).
 */
import { asUser, giveTo, identityFor } from "../identity.ts";
import { chmodSync, closeSync, constants, mkdirSync, openSync, writeFileSync, existsSync } from "node:fs";
import { openOutputFile } from "../output-open.ts";
import { programPaths, PATH_ANSWER_SECONDS, type PathProbes } from "./path-probe.ts";
import { outputMode } from "../job-umask.ts";
import { join, resolve } from "node:path";
import type { JobStart } from "../../proto/agent.ts";
import type { PeerConn } from "../../tbon/pool.ts";
import { logger } from "../../util/log.ts";
import { ApiClient, type TrustedCa } from "../../api/client.ts";
import { commandLaunch, ControllerLink, fileSink, isCommandStart, type Launch } from "../launcher/index.ts";
import type { Proc, ProcessTable } from "./procs.ts";
import { signalNumber } from "./steps.ts";
import { slurmBatchVars } from "../slurm-env.ts";
import { jobPath, ownerOf } from "./env.ts";
import type { JobPlacement } from "./placement.ts";

const log = logger("agent");

export interface JobRunnerContext {
  name: string;
  stateDir: string;
  procs: ProcessTable;
  /** The step tree's edge to the agent at `addr` (this one's own included). */
  connect(addr: string): PeerConn;
  fanout: number;
  processEnv(...overlays: Record<string, string>[]): Record<string, string>;
  /** The job's CPUs on this node (the machine's ids), its cores here (SLURM_CPUS_ON_NODE) and the variables that show it its GPUs. */
  placement(jobId: number): JobPlacement;
  controllerUrl: string;
  /** In a TLS cluster: the cluster CA, as a file job processes can read (EBB_CA). */
  controllerCa?: TrustedCa;
  /** Looks a job's paths up off the agent's thread first (path-probe.ts). */
  paths: PathProbes;
  /** Report the job's end (the end of its run `run`) to the controller. */
  exited(jobId: number, exitCode: number, message?: string, lostNode?: string, run?: number): void;
}

export class JobRunner {
  private readonly commandLaunches = new Map<number, Launch>();
  /** Batch shells running here, by job. */
  private readonly shells = new Map<number, Proc>();

  /** Jobs whose paths are being looked up (path-probe.ts), each with its start; a kill meanwhile takes it out. */
  private readonly probing = new Map<number, JobStart>();

  constructor(private readonly ctx: JobRunnerContext) {}

  /** Starts the job once its directory and output files have answered, off this thread (path-probe.ts). */
  start(job: JobStart): void {
    this.probing.set(job.id, job);
    void this.probe(job).then((hung) => {
      if (this.probing.get(job.id) !== job) return;
      this.probing.delete(job.id);
      if (hung) this.ctx.exited(job.id, 1, `could not start on ${this.ctx.name}: ${hung}`, undefined, job.run);
      else this.startNow(job);
    });
  }

  /**
   * Why the job's paths cannot be used, if one did not answer; an unknown user is startNow's to
   * report. A command job's program is looked up with them: its step 0, which starts here at once,
   * then asks nothing again (PathProbes' vouch).
   */
  private async probe(job: JobStart): Promise<string | undefined> {
    const paths = [job.cwd, job.output, ...(job.error === undefined ? [] : [job.error])].map((p, i) => ({ what: ["working directory", "output file", "error file"][i]!, path: resolve(job.cwd, p) }));
    const command = job.kind === "command" && job.argv?.[0] !== undefined;
    if (command) paths.push(...programPaths(job.argv![0]!, job.cwd, jobPath(job.env)));
    try {
      return await this.ctx.paths.unanswered(identityFor(job.user), paths, PATH_ANSWER_SECONDS, command ? { vouch: job.id } : undefined);
    } catch {
      return undefined;
    }
  }

  private startNow(job: JobStart): void {
    try {
      // Looked at with the user's rights: whether a path exists in a directory closed to them is not theirs to learn.
      if (!asUser(identityFor(job.user), () => existsSync(job.cwd))) return this.ctx.exited(job.id, 1, `working directory ${job.cwd} does not exist on ${this.ctx.name}, or ${job.user ?? "the job's user"} cannot reach it`, undefined, job.run);
      if (job.kind === "batch") this.batch(job);
      else this.command(job);
    } catch (e) {
      this.ctx.exited(job.id, 1, `could not start on ${this.ctx.name}: ${(e as Error).message}`, undefined, job.run);
    }
  }

  /**
   * sbatch --signal: `signal` to the batch shell alone (B:), or to the job's steps, every process
   * of the job here but the batch shell's process group (which holds the shell and its srun).
   */
  signal(jobId: number, signal: NodeJS.Signals, batchOnly: boolean): void {
    const shell = this.shells.get(jobId);
    if (!batchOnly) return this.ctx.procs.signal(jobId, signal, shell?.pid);
    try {
      if (shell) process.kill(shell.pid, signal);
    } catch {
      /* gone */
    }
  }

  /** Whether the job's command launcher runs here (its exit is reported from here). */
  runsLaunch(jobId: number): boolean {
    return this.commandLaunches.has(jobId);
  }

  /** A job is being killed: one whose paths are being looked up does not start, a command step rooted here stops. */
  kill(jobId: number, reason: string): void {
    this.probing.delete(jobId);
    this.ctx.paths.forget(jobId);
    this.commandLaunches.get(jobId)?.cancel(reason, 143);
  }

  private batch(job: JobStart): void {
    const runAs = identityFor(job.user);
    const dir = join(this.ctx.stateDir, "jobs", String(job.id));
    mkdirSync(dir, { recursive: true });
    const script = join(dir, "script");
    writeFileSync(script, job.script ?? "");
    chmodSync(script, 0o700);
    // Run as the job's user, the script is the user's and is reached through an inherited fd
    // (fd 3, /dev/fd/3): the agent's state dir stays closed to it.
    if (runAs) giveTo(runAs, script);
    // Opened with the user's rights: `../` in the path reaches only what the user may write.
    const flags = constants.O_WRONLY | constants.O_CREAT | (job.append ? constants.O_APPEND : constants.O_TRUNC);
    const mode = outputMode(job.env);
    const out = asUser(runAs, () => openOutputFile(job.output, flags, mode));
    let errFd = out;
    let scriptFd: number | undefined;
    const path = runAs ? "/dev/fd/3" : script;
    // The script's arguments are argv words, never shell text: as root they reach it after setpriv's drop (identity.ts runAs).
    const argv = [...((job.script ?? "").startsWith("#!") ? [path] : ["/bin/sh", path]), ...(job.args ?? [])];
    const place = this.ctx.placement(job.id);
    const env = this.ctx.processEnv(job.env, job.jobEnv, place.vars, {
      EBB_NODELIST: job.nodes.map((n) => n.name).join(","),
      EBB_NNODES: String(job.nodes.length),
      EBB_NODENAME: this.ctx.name,
      EBB_CONTROLLER: this.ctx.controllerUrl,
      ...(this.ctx.controllerCa ? { EBB_CA: this.ctx.controllerCa.path } : {}),
      ...slurmBatchVars(this.ctx.name, place.cores, ownerOf(runAs)),
    });
    let proc: Proc;
    try {
      // -e naming -o's file (#SBATCH -o x.msg -e x.msg): one open file, as Slurm's, so neither stream writes over the other.
      if (job.error !== undefined && resolve(job.cwd, job.error) !== resolve(job.cwd, job.output)) errFd = asUser(runAs, () => openOutputFile(job.error!, flags, mode));
      if (runAs) scriptFd = openSync(script, "r");
      proc = this.ctx.procs.spawn(job.id, argv, { cwd: job.cwd, env, stdio: scriptFd === undefined ? [out, errFd] : [out, errFd, scriptFd], runAs, cpus: place.cpus });
    } finally {
      if (scriptFd !== undefined) closeSync(scriptFd);
      closeSync(out);
      if (errFd !== out) closeSync(errFd);
    }
    this.shells.set(job.id, proc);
    void proc.exited.then(({ code, signal }) => {
      this.shells.delete(job.id);
      // As under Slurm, the script's end is the job's: what it left running here (a backgrounded
      // srun, say) dies first, so nothing of it writes to the output after the job has ended.
      this.ctx.procs.signal(job.id, "SIGKILL");
      const exitCode = code ?? 128 + signalNumber(signal);
      log.debug(`job ${job.id} batch script exited`, { exitCode });
      this.ctx.exited(job.id, exitCode, signal ? `batch script killed by ${signal}` : undefined, undefined, job.run);
    });
  }

  private command(job: JobStart): void {
    if (!isCommandStart(job)) throw new Error("a command job needs argv and a step credential");
    // Created with the user's rights, as the batch script's: the file is theirs, and a path
    // (or a symlink planted on it) reaches only what they may write.
    const runAs = identityFor(job.user);
    const sink = fileSink(job.output, { label: false, error: job.error, append: job.append, mode: outputMode(job.env), openAs: (open) => asUser(runAs, open) });
    // The job's own token lets this step root ask for spawn steps, as `ebb run` would.
    const link = new ControllerLink(new ApiClient(this.ctx.controllerUrl, job.jobEnv.EBB_TOKEN ?? "", this.ctx.controllerCa), job.id);
    const launch = commandLaunch(job, { link, fanout: this.ctx.fanout, connect: (addr) => this.ctx.connect(addr), sink, outputFile: { node: this.ctx.name, path: job.output, error: job.error } });
    this.commandLaunches.set(job.id, launch);
    void launch.run().then((r) => {
      this.commandLaunches.delete(job.id);
      this.ctx.paths.forget(job.id);
      sink.flush();
      sink.close();
      link.close();
      this.ctx.exited(job.id, r.exitCode, r.failure, r.lostNode, job.run);
    });
  }
}
