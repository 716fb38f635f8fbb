/**
 * For test/e2e/cgroup-join.test.ts: an agent's Containment and ProcessTable on a thread that is
 * not the process's main thread, as `ebb agent` runs them (agent-thread.ts). It starts processes
 * of a job and answers what the test asks: their cgroups, this thread's own before and after, and
 * what the job's memory cgroup lists while the thread is inside it; and where a thread started
 * while it stands in a job's cgroups is, then and once the job left (`helperScenario`).
 */
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
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

export interface HelperReport {
  /** A thread started while this one stood in job 3's cgroups (as the runtime starts its JIT and GC helpers): its v1 cgroups then, and once the job left. */
  helperInside: string;
  helperAfter: string;
  /** Whether job 3's v1 cgroups are still there once the job left. */
  jobDirsLeft: boolean;
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

/** A thread that says its id, then waits until it is ended. */
function startIdleThread(): { worker: Worker; tid: Promise<number> } {
  const worker = new Worker(import.meta.url);
  const tid = new Promise<number>((resolve) => (worker.onmessage = ({ data }) => resolve(data as number)));
  worker.postMessage({ tid: true });
  return { worker, tid };
}

const threadCgroups = (tid: number) => v1Lines(readFileSync(`/proc/self/task/${tid}/cgroup`, "utf8")).join(" ");

/** A thread started while this one is inside a job's cgroups stays there; the job's removal takes it back. */
export async function helperScenario(name: string): Promise<HelperReport> {
  const dir = mkdtempSync(join(tmpdir(), "ebb-cgroup-join-"));
  const record = join(dir, "groups");
  const containment = new Containment(name, record);
  const procs = new ProcessTable(new GroupLog(record), () => {}, containment);
  let helper: ReturnType<typeof startIdleThread> | undefined;
  try {
    containment.setLimits(3, { cpus: [0], memMiB: 64 });
    const p = procs.spawn(3, ["true"], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["ignore", "ignore"], cpus: [0] });
    helper = containment.fromInside(3, undefined, startIdleThread);
    const tid = await helper.tid;
    const helperInside = threadCgroups(tid);
    await p.exited;
    containment.forgetJob(3);
    const jobDirs = v1Lines(helperInside).map((l) => join(v1Mount(l.split(":")[1]!), l.split(":")[2]!));
    return { helperInside, helperAfter: threadCgroups(tid), jobDirsLeft: jobDirs.some((d) => existsSync(d)) };
  } finally {
    helper?.worker.terminate();
    procs.killAll();
    await containment.ended;
    rmSync(dir, { recursive: true, force: true });
  }
}

declare const self: Worker;
if (!Bun.isMainThread)
  self.onmessage = async ({ data }: MessageEvent<{ name?: string; helper?: boolean; tid?: boolean }>) => {
    if (data.tid) return self.postMessage(Number(/\/task\/(\d+)$/.exec(readlinkSync("/proc/thread-self"))![1]));
    self.postMessage(data.helper ? await helperScenario(data.name!) : await scenario(data.name!));
  };
