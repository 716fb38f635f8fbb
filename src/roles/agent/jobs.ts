/**
 * Jobs whose first node is this one: a batch script run here with its output in a file, or a
 * command launched as step 0 from here (this agent is that step's root, with no extra process).
 */
import { giveTo, identityFor } from "../identity.ts";
import { chmodSync, closeSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { FILES_NOT_OPENED, firstWords, openingFiles, type OutputFiles } from "./output-after-drop.ts";
import { programPaths, PATH_ANSWER_SECONDS, type PathProbes } from "./path-probe.ts";
import { join, resolve } from "node:path";
import type { JobStart } from "../../proto/agent.ts";
import type { PeerConn } from "../../tbon/pool.ts";
import { logger } from "../../util/log.ts";
import { ApiClient, type TrustedCa } from "../../api/client.ts";
import { commandLaunch, ControllerLink, isCommandStart, type Launch } from "../launcher/index.ts";
import { userFileSink, type UserFileSink } from "./user-file-sink.ts";
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
  /** Command jobs whose output files are being opened (user-file-sink.ts), by job: launched once they are. */
  private readonly opening = new Map<number, UserFileSink>();
  /** Batch shells running here, by job. */
  private readonly shells = new Map<number, Proc>();

  /** Jobs whose paths are being looked up (path-probe.ts), each with its start; a kill meanwhile takes it out. */
  private readonly probing = new Map<number, JobStart>();

  constructor(private readonly ctx: JobRunnerContext) {}

  /** Starts the job once its directory and output files have answered, off this thread (path-probe.ts). */
  start(job: JobStart): void {
    this.probing.set(job.id, job);
    void this.probe(job).then((why) => {
      if (this.probing.get(job.id) !== job) return;
      this.probing.delete(job.id);
      if (why) this.ctx.exited(job.id, 1, `could not start on ${this.ctx.name}: ${why}`, undefined, job.run);
      else this.startNow(job);
    });
  }

  /**
   * Why the job cannot start, if one of its paths did not answer or its user says its directory is
   * not there for her (the agent's thread looks at none of them: her processes enter the directory
   * after the drop, and fail the job if the answer was false); an unknown user is startNow's to
   * report. A command job's program is looked up with them: its step 0, which starts here at once,
   * then asks nothing again (PathProbes' vouch).
   */
  private async probe(job: JobStart): Promise<string | undefined> {
    const paths = [job.cwd, job.output, ...(job.error === undefined ? [] : [job.error])].map((p, i) => ({ what: ["working directory", "output file", "error file"][i]!, path: resolve(job.cwd, p) }));
    const command = job.kind === "command" && job.argv?.[0] !== undefined;
    if (command) paths.push(...programPaths(job.argv![0]!, job.cwd, jobPath(job.env)));
    try {
      const r = await this.ctx.paths.lookUp(identityFor(job.user), paths, PATH_ANSWER_SECONDS, command ? { vouch: job.id } : undefined);
      if (r.missing.includes(paths[0]!)) return `working directory ${job.cwd} does not exist on ${this.ctx.name}, or ${job.user ?? "the job's user"} cannot reach it`;
      return r.why;
    } catch {
      return undefined;
    }
  }

  private startNow(job: JobStart): void {
    try {
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

  /** A job is being killed: one whose paths are being looked up or files opened does not start, a command step rooted here stops. */
  kill(jobId: number, reason: string): void {
    this.probing.delete(jobId);
    this.ctx.paths.forget(jobId);
    // One whose files are still being opened does not launch: its writers end (killed, if they hang).
    void this.opening.get(jobId)?.close();
    this.opening.delete(jobId);
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
    // Opened by the script's own process, after the drop (output-after-drop.ts): `../`, a symlink or
    // what hangs at the path reach only what the user may write, and stall only her process.
    const files = outputFilesOf(job);
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
      if (runAs) scriptFd = openSync(script, "r");
      // Its stderr is a pipe until it has opened its files: what it says there is why it could not.
      const start = openingFiles(files, argv, env);
      proc = this.ctx.procs.spawn(job.id, start.argv, { cwd: job.cwd, env: start.env, stdio: scriptFd === undefined ? ["ignore", "pipe"] : ["ignore", "pipe", scriptFd], runAs, cpus: place.cpus });
    } finally {
      if (scriptFd !== undefined) closeSync(scriptFd);
    }
    // Read until it closes its stderr (its files open), or a second after it exited: what it said before it exits is in the pipe by then.
    const said = firstWords(proc.stderr, proc.exited.then(() => Bun.sleep(1000)));
    this.shells.set(job.id, proc);
    void proc.exited.then(async ({ code, signal }) => {
      this.shells.delete(job.id);
      // As under Slurm, the script's end is the job's: what it left running here (a backgrounded
      // srun, say) dies first, so nothing of it writes to the output after the job has ended.
      this.ctx.procs.signal(job.id, "SIGKILL");
      const exitCode = code ?? 128 + signalNumber(signal);
      log.debug(`job ${job.id} batch script exited`, { exitCode });
      const why = (await said).trim();
      this.ctx.exited(job.id, exitCode, signal ? `batch script killed by ${signal}` : why ? `could not start on ${this.ctx.name}: ${why}` : undefined, undefined, job.run);
    });
  }

  private command(job: JobStart): void {
    if (!isCommandStart(job)) throw new Error("a command job needs argv and a step credential");
    // Written by processes of the user's (user-file-sink.ts), which open the files after the drop:
    // a path (or a symlink planted on it) reaches only what they may write, and what hangs there
    // stalls only them. Her ranks on this node append to the same files themselves (StepSpec.outputFile).
    const runAs = identityFor(job.user);
    const sink = userFileSink(outputFilesOf(job), { cwd: job.cwd, env: job.env, runAs });
    // Launched once the files are open (truncated first, unless appending), so no rank's output goes before it.
    this.opening.set(job.id, sink);
    void sink.opened.then((why) => {
      if (this.opening.get(job.id) !== sink) return;
      this.opening.delete(job.id);
      if (why) {
        this.ctx.paths.forget(job.id);
        void sink.close();
        return this.ctx.exited(job.id, FILES_NOT_OPENED, `could not start on ${this.ctx.name}: ${why}`, undefined, job.run);
      }
      // The job's own token lets this step root ask for spawn steps, as `ebb run` would.
      const link = new ControllerLink(new ApiClient(this.ctx.controllerUrl, job.jobEnv.EBB_TOKEN ?? "", this.ctx.controllerCa), job.id);
      const launch = commandLaunch(job, { link, fanout: this.ctx.fanout, connect: (addr) => this.ctx.connect(addr), sink, outputFile: { node: this.ctx.name, path: job.output, error: job.error } });
      this.commandLaunches.set(job.id, launch);
      void launch.run().then(async (r) => {
        this.commandLaunches.delete(job.id);
        this.ctx.paths.forget(job.id);
        link.close();
        await sink.close();
        this.ctx.exited(job.id, r.exitCode, r.failure, r.lostNode, job.run);
      });
    });
  }
}

/** A job's output and error files; -e naming -o's file (#SBATCH -o x.msg -e x.msg) is one open file, as Slurm's, so neither stream writes over the other. */
function outputFilesOf(job: JobStart): OutputFiles {
  const err = job.error !== undefined && resolve(job.cwd, job.error) !== resolve(job.cwd, job.output) ? job.error : undefined;
  return { out: job.output, err, append: job.append === true };
}
