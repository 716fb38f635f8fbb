/**
 * For test/e2e/cgroup-join.test.ts: an agent's Containment and ProcessTable on a thread that is
 * not the process's main thread, as `ebb agent` runs them (agent-thread.ts). It starts processes
 * of a job and answers what the test asks: their cgroups, this thread's own before and after, and
 * what the job's memory cgroup lists while the thread is inside it.
 */
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Containment } from "../../src/roles/agent/containment.ts";
import { GroupLog } from "../../src/roles/agent/group-log.ts";
import { ProcessTable } from "../../src/roles/agent/procs.ts";

export interface JoinReport {
  joinsByThread: boolean;
  /** /proc/self/cgroup of a process of job 1, as it saw it. */
  rankCgroups: string[];
  /** This thread's cgroups and CPUs before and after. */
  threadBefore: string;
  threadAfter: string;
  /** The CPUs a process may run on (Cpus_allowed_list): job 1's one rank (all of the job's CPU 0), job 2's rank bound to CPU 1 of the job's 0-1. */
  rankCpus: { whole: string; slice: string };
  /** With this thread inside job 1's cgroups: its id, the job's memory cgroup's tasks, and by how much the job's memory use grew while this thread touched 16 MiB of its own. */
  inside: { tid: number; tasks: number[]; jobGrewMiB: number };
}

/** Where the v1 hierarchy of `controller` is mounted. */
const v1Mount = (controller: string) =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" "))
    .find((f) => f[f.indexOf("-") + 1] === "cgroup" && (f[f.indexOf("-") + 3] ?? "").split(",").includes(controller))![4]!;
const v1Lines = (text: string) => text.split("\n").filter((l) => /^\d+:(cpuset|memory):/.test(l));
const threadState = () => `${v1Lines(readFileSync("/proc/thread-self/cgroup", "utf8")).join(" ")} ${/Cpus_allowed_list:\s*(\S+)/.exec(readFileSync("/proc/thread-self/status", "utf8"))?.[1]}`;

export async function scenario(name: string): Promise<JoinReport> {
  const dir = mkdtempSync(join(tmpdir(), "ebb-cgroup-join-"));
  const record = join(dir, "groups");
  const containment = new Containment(name, record);
  const procs = new ProcessTable(new GroupLog(record), () => {}, containment);
  const env = { PATH: process.env.PATH! };
  try {
    const threadBefore = threadState();
    containment.setLimits(1, { cpus: [0], memMiB: 64 });
    const p = procs.spawn(1, ["cat", "/proc/self/cgroup"], { cwd: dir, env, stdio: ["pipe", "ignore"], cpus: [0] });
    const rankCgroups = v1Lines(await new Response(p.stdout!).text());
    await p.exited;
    const joinsByThread = containment.joinsByThread(1);
    const cpusOf = async (jobId: number, cpus: number[]) => {
      const q = procs.spawn(jobId, ["grep", "Cpus_allowed_list", "/proc/self/status"], { cwd: dir, env, stdio: ["pipe", "ignore"], cpus });
      const text = await new Response(q.stdout!).text();
      await q.exited;
      return text.split(":")[1]!.trim();
    };
    const whole = await cpusOf(1, [0]);
    containment.setLimits(2, { cpus: [0, 1], memMiB: 64 });
    const slice = await cpusOf(2, [1]);
    const threadAfter = threadState();
    const memory = join(v1Mount("memory"), /^\d+:memory:(\S+)$/m.exec(rankCgroups.join("\n"))![1]!);
    const used = () => Number(readFileSync(join(memory, "memory.usage_in_bytes"), "utf8"));
    const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync("/proc/thread-self"))![1]);
    const inside = containment.fromInside(1, undefined, () => {
      const before = used();
      new Uint8Array(16 << 20).fill(1);
      return { tid, tasks: readFileSync(join(memory, "tasks"), "utf8").split("\n").filter(Boolean).map(Number), jobGrewMiB: (used() - before) / 2 ** 20 };
    });
    return { joinsByThread, rankCgroups, rankCpus: { whole, slice }, threadBefore, threadAfter, inside };
  } finally {
    procs.killAll();
    await containment.ended;
    rmSync(dir, { recursive: true, force: true });
  }
}

declare const self: Worker;
if (!Bun.isMainThread) self.onmessage = async ({ data }: MessageEvent<{ name: string }>) => self.postMessage(await scenario(data.name));
