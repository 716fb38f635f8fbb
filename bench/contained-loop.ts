/**
 * The contained machine's speed: a shell loop that does, for each of N ranks, what an agent's
 * containment must (roles/agent/containment.ts, cgroup-limits.ts), and nothing else: the job's
 * cgroups made (v2 where the host has it; v1 cpuset and memory where it mounts them, with the
 * limits written as the agent writes them: sched_load_balance 0, cpus, mems, memory and
 * memory+swap limits), the process put in all of them before it runs /bin/true, and the cgroups
 * removed after it exited. Not a benchmark of its own: wide-launch's second baseline. The script
 * prints the time (ns since the epoch) when the last rank has exited and the removal begins.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** This process's cgroup directory in the hierarchy mounted with `controller` (v1), or the v2 one ("" ). */
function ownCgroup(controller: string): string | undefined {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" "));
  const mount = controller === "" ? mounts.find((f) => f[f.indexOf("-") + 1] === "cgroup2") : mounts.find((f) => f[f.indexOf("-") + 1] === "cgroup" && (f[f.indexOf("-") + 3] ?? "").split(",").includes(controller));
  const own = readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .map((l) => /^\d+:([^:]*):(.*)$/.exec(l))
    .find((m) => (controller === "" ? m?.[1] === "" : m?.[1]!.split(",").includes(controller)))?.[2];
  if (!mount || own === undefined) return undefined;
  const root = mount[3] ?? "/";
  const dir = join(mount[4]!, root !== "/" && own.startsWith(root) ? own.slice(root.length) : own);
  return existsSync(join(dir, "cgroup.procs")) ? dir : undefined;
}

/** The shell script of one round for `n` ranks under a base named `name` in each hierarchy; undefined without any cgroup to use. */
export function containedLoopScript(n: number, name: string): string | undefined {
  const v2 = ownCgroup("");
  const cpuset = ownCgroup("cpuset");
  const memory = ownCgroup("memory");
  if (!v2 && !cpuset && !memory) return undefined;
  const bases = [v2, cpuset, memory].filter((d) => d !== undefined).map((d) => join(d!, name));
  const memsw = memory !== undefined && existsSync(join(memory, "memory.memsw.limit_in_bytes"));
  const lines = [
    "set -e",
    // A round that fails leaves nothing behind.
    `trap 'for b in ${bases.join(" ")}; do rmdir $b/j* $b 2>/dev/null || true; done' EXIT`,
    `mkdir ${bases.join(" ")}`,
    ...(cpuset
      ? [
          `C=${join(cpuset, name)}`,
          `echo 0 > $C/cpuset.sched_load_balance`,
          `cat ${join(cpuset, "cpuset.cpus")} > $C/cpuset.cpus`,
          `cat ${join(cpuset, "cpuset.mems")} > $C/cpuset.mems`,
          `CPUS=$(cat $C/cpuset.cpus)`,
          `MEMS=$(cat $C/cpuset.mems)`,
        ]
      : []),
    // Made first, then the ranks started: a limit write in the loop that starts them fails with EINTR when an
    // exiting rank's SIGCHLD is pending. One mkdir (and one rmdir) for all: mkdir(2) per cgroup, not a process each.
    `mkdir ${bases.map((b) => `${b}/j{1..${n}}`).join(" ")}`,
    `for i in $(seq ${n}); do`,
    ...(cpuset ? [`  echo 0 > $C/j$i/cpuset.sched_load_balance; echo $MEMS > $C/j$i/cpuset.mems; echo $CPUS > $C/j$i/cpuset.cpus`] : []),
    ...(memory ? [`  echo 1073741824 > ${join(memory, name)}/j$i/memory.limit_in_bytes${memsw ? `; echo 1073741824 > ${join(memory, name)}/j$i/memory.memsw.limit_in_bytes` : ""}`] : []),
    "done",
    `for i in $(seq ${n}); do`,
    `  ( ${[v2 && `echo $BASHPID > ${join(v2, name)}/j$i/cgroup.procs`, cpuset && `echo $BASHPID > $C/j$i/tasks`, memory && `echo $BASHPID > ${join(memory, name)}/j$i/tasks`].filter(Boolean).join("; ")}; exec /bin/true ) &`,
    "done",
    "wait",
    // When the ranks are done: `ebb run` returns then too, before its agents remove the job's cgroups.
    "date +%s%N",
    `rmdir ${bases.map((b) => `${b}/j{1..${n}}`).join(" ")}`,
  ];
  return lines.join("\n");
}
