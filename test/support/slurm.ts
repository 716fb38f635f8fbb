/**
 * A real Slurm on loopback: munged with a generated key, slurmctld and two slurmd (nodes n1, n2,
 * both on this host with ports of their own) from a generated slurm.conf, run as root. `env` is
 * what salloc/sbatch/srun need to find it.
 */
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitFor } from "./cluster.ts";

export class LocalSlurm {
  readonly dir = mkdtempSync(join(tmpdir(), "ebb-slurm-"));
  readonly conf = join(this.dir, "slurm.conf");
  private readonly daemons: Subprocess[] = [];

  /**
   * `cpus` and `memoryMb` per node (more than the host has: slurmd takes the configured counts),
   * `partitions` (the first the default, each with every node), `clusterName`; `shared`: jobs share
   * nodes, each with its cores and memory (select/cons_tres, CR_Core_Memory, memory per core by
   * default the node's over its cores: as ebb), else each job has its nodes whole (select/linear).
   */
  constructor(
    readonly nodes = ["n1", "n2"],
    private readonly o: { cpus?: number; memoryMb?: number; partitions?: string[]; clusterName?: string; shared?: boolean } = {},
  ) {}

  get env(): Record<string, string> {
    return { ...(process.env as Record<string, string>), SLURM_CONF: this.conf };
  }

  private quickPoll: string | undefined;

  /**
   * `env` for the tests' own `sbatch --wait`: sbatch-quick-poll.c preloaded, so it sees its job end
   * within 0.2 s instead of at the next multiple of 2 s (the job and what it runs get `env` alone).
   */
  get waitEnv(): Record<string, string> {
    if (this.quickPoll === undefined) {
      const lib = join(this.dir, "sbatch-quick-poll.so");
      const cc = Bun.spawnSync(["cc", "-shared", "-fPIC", "-O2", "-o", lib, join(import.meta.dir, "sbatch-quick-poll.c")], { stderr: "pipe" });
      if (cc.exitCode !== 0) throw new Error(`cc sbatch-quick-poll.c: ${cc.stderr.toString()}`);
      this.quickPoll = lib;
    }
    return { ...this.env, LD_PRELOAD: this.quickPoll };
  }

  async start(): Promise<this> {
    for (const bin of ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"])
      if (!existsSync(bin)) throw new Error(`${bin} not found: install munge and slurm-wlm (.ci/run does)`);
    const run = join(this.dir, "run");
    mkdirSync(run);
    mkdirSync(join(this.dir, "state"));
    writeFileSync(join(this.dir, "munge.key"), randomBytes(1024), { mode: 0o600 });
    const sock = join(run, "munge.sock");
    this.daemons.push(
      Bun.spawn(["/usr/sbin/munged", "-F", `--key-file=${join(this.dir, "munge.key")}`, `--socket=${sock}`, `--pid-file=${join(run, "munged.pid")}`, `--log-file=${join(this.dir, "munged.log")}`, `--seed-file=${join(run, "munge.seed")}`, "--force"], { stdout: "ignore", stderr: "ignore" }),
    );
    await waitFor("munged's socket", () => existsSync(sock));
    const ports = [await freePort(), await freePort(), ...(await Promise.all(this.nodes.map(() => freePort())))];
    writeFileSync(
      this.conf,
      [
        `ClusterName=${this.o.clusterName ?? "ebbtest"}`,
        // Nodes with more CPUs than the host has (one host plays them all).
        ...(this.o.cpus !== undefined || this.o.memoryMb !== undefined ? ["SlurmdParameters=config_overrides"] : []),
        "SlurmctldHost=localhost(127.0.0.1)",
        `SlurmctldPort=${ports[0]}`,
        `SlurmdPort=${ports[1]}`,
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        `AuthInfo=socket=${sock}`,
        "CredType=cred/munge",
        `StateSaveLocation=${join(this.dir, "state")}`,
        `SlurmdSpoolDir=${join(this.dir, "spool-%n")}`,
        `SlurmctldPidFile=${join(run, "slurmctld.pid")}`,
        `SlurmdPidFile=${join(run, "slurmd-%n.pid")}`,
        `SlurmctldLogFile=${join(this.dir, "slurmctld.log")}`,
        `SlurmdLogFile=${join(this.dir, "slurmd-%n.log")}`,
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        ...(this.o.shared
          ? ["SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory", ...(this.o.memoryMb !== undefined ? [`DefMemPerCPU=${Math.floor(this.o.memoryMb / (this.o.cpus ?? 2))}`] : [])]
          : ["SelectType=select/linear"]),
        "SchedulerType=sched/builtin",
        // A batch job is scheduled at slurmctld's next pass (each second), not up to 3 s after it is
        // submitted (batch_sched_delay's default): sbatch --wait of a job that runs 0.1 s took 3 s.
        "SchedulerParameters=batch_sched_delay=0",
        // sbatch --wait sleeps 2 s between polls while 2 >= MinJobAge / 2 (integer division), else 4
        // times longer each time (2, 8, 32 s: a 3 s job took 10 s at the default 300). 5 is the most
        // that keeps 2 s; an ended job stays readable (scontrol) at least that long. (0, "never
        // purged" in the man page, let the next purge pass take ended jobs here: scontrol found none.)
        "MinJobAge=5",
        "MpiDefault=none",
        "ReturnToService=2",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SwitchType=switch/none",
        "PlugStackConfig=/dev/null",
        // Several slurmd on this one host: each node has its own port.
        ...this.nodes.map((n, i) => `NodeName=${n} NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[2 + i]} CPUs=${this.o.cpus ?? 2}${this.o.memoryMb !== undefined ? ` RealMemory=${this.o.memoryMb}` : ""} State=UNKNOWN`),
        ...(this.o.partitions ?? ["debug"]).map((p, i) => `PartitionName=${p} Nodes=${this.nodes.join(",")} Default=${i === 0 ? "YES" : "NO"} MaxTime=INFINITE State=UP`),
        "",
      ].join("\n"),
    );
    this.daemons.push(Bun.spawn(["/usr/sbin/slurmctld", "-D", "-c", "-i"], { env: this.env, stdout: "ignore", stderr: Bun.file(join(this.dir, "slurmctld.err")) }));
    for (const n of this.nodes) this.daemons.push(Bun.spawn(["/usr/sbin/slurmd", "-D", "-N", n], { env: this.env, stdout: "ignore", stderr: Bun.file(join(this.dir, `slurmd-${n}.err`)) }));
    await waitFor(
      "every Slurm node idle",
      () => {
        // A line per partition, each with every node.
        const lines = Bun.spawnSync(["sinfo", "-h", "-o", "%T %D"], { env: this.env }).stdout.toString().trim().split("\n");
        return lines.every((l) => l === `idle ${this.nodes.length}`);
      },
      120_000,
    );
    return this;
  }

  logs(): string {
    return ["slurmctld.log", ...this.nodes.map((n) => `slurmd-${n}.log`)].map((f) => (existsSync(join(this.dir, f)) ? `--- ${f}\n${readFileSync(join(this.dir, f), "utf8").slice(-3000)}` : "")).join("\n");
  }

  async stop(): Promise<void> {
    for (const d of this.daemons.reverse()) d.kill("SIGTERM");
    await Promise.all(this.daemons.map((d) => d.exited));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
