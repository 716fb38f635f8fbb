/**
 * Step roots of elastic command jobs, each its own process on the controller's host (`ebb
 * step-root`): outside every node, so that any node of the job may be lost, its first included,
 * and outside the controller's event loop, which the job's output never crosses. Run as the job's
 * user when the controller is root; in their own session, so that a controller restart leaves them
 * running (they reconnect as `ebb run` does). The job's end comes as their `release`; an exit
 * without one ends the job too.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { JobStart } from "../../proto/agent.ts";
import type { StepRootStart } from "../../proto/step-root.ts";
import { identityFor, runAsArgv } from "../identity.ts";
import { SYSTEM_PATH } from "../system-path.ts";
import { logger } from "../../util/log.ts";
import { ebbCommand } from "../../util/self.ts";

const log = logger("controller");

export interface StepRootsOptions {
  /** The controller's URL from its own host. */
  url: string;
  /** The cluster CA (PEM), in a TLS cluster. */
  ca?: string;
  fanout: number;
  /** A root process ended (its job may have reported its end before). */
  exited(jobId: number, code: number, signal: string | null): void;
}

/**
 * Whether this controller can host step roots: always on plain HTTP; with TLS only if it has the
 * cluster CA (STATE_DIR/ca.pem, as `ebb up --tls` makes it), which the roots trust.
 */
export function stepRootCa(stateDir: string, tls: boolean): { ca?: string } | undefined {
  if (!tls) return {};
  const path = join(stateDir, "ca.pem");
  if (!existsSync(path)) return undefined;
  return { ca: readFileSync(path, "utf8") };
}

export class StepRoots {
  constructor(private readonly o: StepRootsOptions) {}

  /** Starts the root of `job` (a command job); an error message if it could not. */
  start(job: JobStart): string | undefined {
    let argv = [...ebbCommand(), "step-root"];
    let env: Record<string, string> = { PATH: SYSTEM_PATH, ...(process.env.EBB_LOG ? { EBB_LOG: process.env.EBB_LOG } : {}) };
    try {
      const id = identityFor(job.user);
      if (id) {
        argv = runAsArgv(id, "/", argv);
        env = { ...env, HOME: id.home, USER: id.user, LOGNAME: id.user };
      }
      const start: StepRootStart = { controller: this.o.url, ...(this.o.ca === undefined ? {} : { ca: this.o.ca }), fanout: this.o.fanout, job };
      const proc = Bun.spawn(argv, { cwd: "/", env, stdin: "pipe", stdout: "ignore", stderr: "inherit", detached: true });
      proc.stdin.write(JSON.stringify(start));
      void proc.stdin.end();
      void proc.exited.then((code) => {
        const signal = proc.signalCode === null ? null : String(proc.signalCode);
        if (code !== 0) log.info(`job ${job.id}: its step root exited with ${signal ?? `code ${code}`}`, { job: job.id });
        this.o.exited(job.id, code, signal);
      });
      log.debug(`job ${job.id}: step root started`, { job: job.id, pid: proc.pid });
      return undefined;
    } catch (e) {
      return `could not start its step root on the controller's host: ${(e as Error).message}`;
    }
  }
}
