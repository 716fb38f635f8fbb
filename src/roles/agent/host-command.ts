/**
 * A site's own check for a host rule (`cmd.NAME`): the admin's command, run every `every` seconds
 * with a timeout; its exit status is the rule's input. It never blocks the agent (one run at a
 * time, awaited in the background) and never runs as root: a root agent runs it as `user`
 * (default nobody) through setpriv, with only PATH in its environment, in /.
 */
import type { Subprocess } from "bun";
import { constants } from "node:os";
import { agentIsRoot, lookupIdentity, runAsArgv, type Identity } from "../identity.ts";
import { SYSTEM_PATH } from "../system-path.ts";
import { logger } from "../../util/log.ts";
import type { Rule } from "../../model/host-rules.ts";

const log = logger("agent");

export class HostCommand {
  private readonly argv: string[];
  private running: Subprocess | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private value: number | undefined;
  private lastProblem = "";

  /** Throws when a root agent cannot find the user to run it as (the config names a user this node lacks). */
  constructor(private readonly rule: Rule & { command: NonNullable<Rule["command"]> }) {
    let id: Identity | undefined;
    if (agentIsRoot()) {
      try {
        id = lookupIdentity(rule.command.user);
      } catch (e) {
        throw new Error(`hostStates.rules.${rule.name}.user: ${(e as Error).message}`);
      }
      if (id.uid === 0) throw new Error(`hostStates.rules.${rule.name}.user: ${rule.command.user} is root; a host rule's command runs as an unprivileged user`);
    }
    this.argv = id ? runAsArgv(id, "/", rule.command.run) : [...rule.command.run];
  }

  /** Its last exit status; undefined before the first run ends, and after a run that failed to start or timed out. */
  latest(): number | undefined {
    return this.value;
  }

  /** Starts a run if one is due and none is running. */
  tick(nowMs: number): void {
    if (this.running || nowMs - this.lastStart < this.rule.command.every * 1000) return;
    this.lastStart = nowMs;
    let proc: Subprocess;
    try {
      proc = Bun.spawn(this.argv, { cwd: "/", env: { PATH: SYSTEM_PATH }, stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: true });
    } catch (e) {
      return this.problem(`cannot run ${this.rule.command.run[0]}: ${(e as Error).message}`);
    }
    this.running = proc;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-proc.pid, "SIGKILL");
      } catch {
        proc.kill("SIGKILL");
      }
    }, this.rule.command.timeout * 1000);
    void proc.exited.then((code) => {
      clearTimeout(timer);
      this.running = undefined;
      if (timedOut) return this.problem(`${this.rule.command.run[0]} ran longer than ${this.rule.command.timeout} s and was killed`);
      this.value = proc.signalCode ? 128 + (constants.signals[proc.signalCode as keyof typeof constants.signals] ?? 0) : code;
      this.lastProblem = "";
    });
  }

  stop(): void {
    if (!this.running) return;
    try {
      process.kill(-this.running.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }

  private problem(why: string): void {
    this.value = undefined;
    if (why !== this.lastProblem) log.warn(`host rule ${this.rule.name}: ${why}; it keeps its last value`);
    this.lastProblem = why;
  }
}
