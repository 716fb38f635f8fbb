/**
 * A process of a job is born in the job's cgroup v1 hierarchies when the agent runs on a worker
 * thread (containment.ts `fromInside`), as `ebb agent` and `ebb up` run it: no shell joins them
 * first, and the agent's thread is back in its own cgroups and on its own CPUs afterwards. While the
 * thread is inside, the memory the agent touches is not charged to the job: the kernel charges a
 * process's page faults to its main thread's memory cgroup. (A main thread inside was charged, and
 * with the job at its limit the OOM killer picked the agent.) A thread started meanwhile (the
 * runtime's JIT and GC helpers start on demand) is taken back when the job leaves. Needs root and cgroup v1 cpuset and memory hierarchies (the agent uses
 * v1 only where v2 lacks those controllers).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { HelperReport, JoinReport } from "../support/cgroup-join-thread.ts";

const v1 = /^\d+:\S*cpuset\S*:/m.test(readFileSync("/proc/self/cgroup", "utf8")) && /^\d+:\S*memory\S*:/m.test(readFileSync("/proc/self/cgroup", "utf8"));

test.skipIf(!v1 || process.getuid!() !== 0)("from a worker thread, a job's process starts in its v1 cpuset and memory cgroups; the thread goes back to its own cgroups and CPUs; the agent's own memory is not charged to the job", async () => {
  const worker = new Worker(new URL("../support/cgroup-join-thread.ts", import.meta.url).href);
  const report = await new Promise<JoinReport>((resolve, reject) => {
    worker.onmessage = ({ data }) => resolve(data as JoinReport);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ name: "join-test" });
  });
  worker.terminate();
  expect(report.joinsByThread).toBe(true);
  const agentDir = `/ebb-agent-join-test-${process.pid}/job-1`;
  expect(report.rankCgroups.length).toBe(2);
  for (const line of report.rankCgroups) expect(line.endsWith(agentDir)).toBe(true);
  // Bound from birth: by the cpuset alone when it has exactly the rank's CPUs, else by the thread's own binding too.
  expect(report.rankCpus).toEqual({ whole: "0", slice: "1" });
  expect(report.threadAfter).toBe(report.threadBefore);
  expect(report.threadAfter).not.toContain("job-");
  expect(report.inside.tasks).toContain(report.inside.tid);
  expect(report.inside.jobGrewMiB).toBeLessThan(4);
});

test.skipIf(!v1 || process.getuid!() !== 0)("a thread started while the agent's thread stands in a job's v1 cgroups (as the runtime starts its JIT and GC helpers) is taken back when the job leaves, and the job's cgroups are removed", async () => {
  const worker = new Worker(new URL("../support/cgroup-join-thread.ts", import.meta.url).href);
  const report = await new Promise<HelperReport>((resolve, reject) => {
    worker.onmessage = ({ data }) => resolve(data as HelperReport);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ name: "join-helper", helper: true });
  });
  worker.terminate();
  expect(report.helperInside).toContain(`/ebb-agent-join-helper-${process.pid}/job-3`);
  expect(report.helperAfter).not.toContain("job-");
  expect(report.jobDirsLeft).toBe(false);
});
