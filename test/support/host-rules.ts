/**
 * A loopback cluster of real agents with host rules (issue 34), for the host-state e2e tests.
 *
 * All agents share this machine, so each node's `cpu.other` reads its own cgroup v2 group, made
 * here (the rule's `cgroup`); a hog (a busy loop that is no ebb job) in one node's group raises the
 * CPU that node's agent measures, while the others' stay empty. A site command rule per node
 * (`cmd.busy`, `cmd.owner`) fails while a flag file exists, so a test turns it on and off. Needs
 * root and a writable cgroup v2 hierarchy.
 */
import { expect } from "bun:test";
import type { Subprocess } from "bun";
import { chmodSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestCluster, waitFor } from "./cluster.ts";
import { cgroup2Mount } from "../../src/roles/agent/containment.ts";

/** A node's host state as GET /v1/nodes and `ebb nodes --json` give it. */
export type Host = { state: string; rule: string; inputs: Record<string, number>; since: string | null };
/** The levels a command rule can set; its input is `cmd.LEVEL`, its flag file `NODE.LEVEL`. */
export type FlagLevel = "busy" | "owner";

/** cpu.other's thresholds in share of the machine's CPU: an empty group measures 0; a hog, however little of a loaded machine it gets, more than 0.5 %. */
export const CPU_BUSY = 0.001;
export const CPU_OVERLOADED = 0.005;

export interface HostRulesOptions {
  nodes: string[];
  controllerArgs?: string[];
  /** The agents' sampling: seconds between samples, smoothing, dwell, and between resends of moved inputs (refresh). */
  hostStates: { interval: number; smoothing: number; dwell: number; refresh?: number };
  /** The command rules each node has besides cpu.other. */
  flags?: (node: string) => FlagLevel[];
}

export class HostRulesCluster {
  readonly c: TestCluster;
  /** Where the command rules' flag files are; nobody (who runs the commands) can look in. */
  readonly flags: string;
  private readonly mount = cgroup2Mount();
  private readonly group = `ebb-test-host-rules-${process.pid}`;
  private hog: Subprocess | undefined;

  /** Made in a test file's beforeAll, before `start`, so that its afterAll's `stop` cleans up after a failed start too. */
  constructor(readonly opts: HostRulesOptions) {
    expect(process.getuid!()).toBe(0);
    expect(this.mount).toBeDefined();
    for (const n of opts.nodes) mkdirSync(this.groupDir(n), { recursive: true });
    this.c = new TestCluster({ agents: opts.nodes.length, controllerArgs: opts.controllerArgs });
    this.flags = mkdtempSync(join(tmpdir(), "ebb-host-flags-"));
    chmodSync(this.flags, 0o755);
  }

  /** The cluster up, every agent with the rules (`--config`), every node IDLE. */
  async start(): Promise<void> {
    const opts = this.opts;
    const rules = (n: string) => {
      const out: Record<string, unknown> = { "cpu.other": { busy: CPU_BUSY, overloaded: CPU_OVERLOADED, cgroup: `${this.group}/${n}` } };
      for (const level of opts.flags?.(n) ?? []) out[`cmd.${level}`] = { run: ["/bin/sh", "-c", `test ! -e ${this.flagFile(n, level)}`], [level]: 1, every: 0.5, timeout: 5 };
      return out;
    };
    const config = { hostStates: { ...opts.hostStates, rules: {} }, nodes: Object.fromEntries(opts.nodes.map((n) => [n, { hostStates: { rules: rules(n) } }])) };
    const file = join(this.c.dir, "agent.json");
    writeFileSync(file, JSON.stringify(config));
    await this.c.startController();
    for (const n of opts.nodes) this.c.startAgent(n, ["--config", file]);
    await this.c.waitNodes(opts.nodes.length, "IDLE", 90_000);
  }

  /** `node`'s cgroup v2 group, which its cpu.other rule reads. */
  groupDir(node: string): string {
    return join(this.mount!, this.group, node);
  }

  private flagFile(node: string, level: FlagLevel): string {
    return join(this.flags, `${node}.${level}`);
  }

  /** Make `node`'s `cmd.LEVEL` rule fail (on) or pass (off). */
  setFlag(node: string, level: FlagLevel, on: boolean): void {
    if (on) writeFileSync(this.flagFile(node, level), "");
    else rmSync(this.flagFile(node, level));
  }

  /** A busy loop that is no ebb job, in `node`'s group: that node's cpu.other. One at a time. */
  startHog(node: string): Subprocess {
    expect(this.hog).toBeUndefined();
    this.hog = Bun.spawn(["/bin/sh", "-c", "while :; do :; done"], { stdio: ["ignore", "ignore", "ignore"] });
    writeFileSync(join(this.groupDir(node), "cgroup.procs"), String(this.hog.pid));
    return this.hog;
  }

  async stopHog(): Promise<void> {
    if (!this.hog) return;
    this.hog.kill("SIGKILL");
    await this.hog.exited;
    this.hog = undefined;
  }

  /** Every node's host state, from GET /v1/nodes. */
  async hosts(): Promise<Record<string, Host>> {
    const r = await this.c.api("GET", "/v1/nodes");
    expect(r.status).toBe(200);
    return Object.fromEntries((r.json.nodes as { name: string; host: Host }[]).map((n) => [n.name, n.host]));
  }

  /** Wait until `node`'s host state is `state`; its host then. */
  waitHost(node: string, state: string): Promise<Host> {
    return waitFor(`${node} to be ${state}`, async () => {
      const h = (await this.hosts())[node]!;
      return h.state === state ? h : undefined;
    }, 90_000);
  }

  /** The hog, the cluster, the flag files and the groups gone. */
  async stop(): Promise<void> {
    await this.stopHog();
    await this.c.stop();
    rmSync(this.flags, { recursive: true, force: true });
    for (const d of [...this.opts.nodes.map((n) => this.groupDir(n)), join(this.mount!, this.group)])
      try {
        rmdirSync(d);
      } catch {
        /* not made */
      }
  }
}
