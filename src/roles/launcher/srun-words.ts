/**
 * How Slurm 22.05's srun says its tasks' ends (src/srun/libsrun/launch.c _task_finish, checked side
 * by side): `NODE: task N: Exited with exit code X`, `NODE: task N: Killed` (strsignal's words for
 * the signal), `NODE: task N: Out Of Memory` (once); the tasks of a node that end alike and are
 * reported together in one line, `NODE: tasks 0-3: ...`. A program its node could not start ends the
 * task with execve's errno as its exit code (No such file or directory: 2, Permission denied: 13),
 * where ebb run's ranks end 127 and 126 as a shell's commands do, slurmstepd saying why on the
 * task's standard error. Pure.
 */
import { formatIndexList } from "../../domain/index-list.ts";

/** glibc's strsignal() for the signals a task ends by. */
const STRSIGNAL: Record<string, string> = {
  SIGHUP: "Hangup",
  SIGINT: "Interrupt",
  SIGQUIT: "Quit",
  SIGILL: "Illegal instruction",
  SIGTRAP: "Trace/breakpoint trap",
  SIGABRT: "Aborted",
  SIGBUS: "Bus error",
  SIGFPE: "Floating point exception",
  SIGKILL: "Killed",
  SIGUSR1: "User defined signal 1",
  SIGSEGV: "Segmentation fault",
  SIGUSR2: "User defined signal 2",
  SIGPIPE: "Broken pipe",
  SIGALRM: "Alarm clock",
  SIGTERM: "Terminated",
  SIGXCPU: "CPU time limit exceeded",
  SIGXFSZ: "File size limit exceeded",
  SIGSYS: "Bad system call",
};

export interface TaskEnd {
  node: string;
  rank: number;
  code: number;
  signal?: string;
  oom?: boolean;
}

const endWords = (e: TaskEnd) => (e.oom ? "Out Of Memory" : e.signal ? (STRSIGNAL[e.signal] ?? `Unknown signal ${e.signal}`) : `Exited with exit code ${e.code}`);

/** srun's line (after "srun: error: ") for one task that ended badly. */
export const srunTaskEnd = (e: TaskEnd): string => `${e.node}: task ${e.rank}: ${endWords(e)}`;

/** Tasks' bad ends as they come, said a batch at a time: one line per node and way of ending; Out Of Memory once. */
export class SrunEnds {
  private pending: TaskEnd[] = [];
  private oomSaid = false;

  add(e: TaskEnd): void {
    this.pending.push(e);
  }

  /** The lines for what came since the last flush (after "srun: error: "). */
  flush(): string[] {
    const groups = new Map<string, { node: string; words: string; ranks: number[] }>();
    for (const e of this.pending) {
      const words = endWords(e);
      const key = `${e.node}\0${words}`;
      const g = groups.get(key) ?? groups.set(key, { node: e.node, words, ranks: [] }).get(key)!;
      g.ranks.push(e.rank);
    }
    this.pending = [];
    const lines: string[] = [];
    for (const g of groups.values()) {
      if (g.words === "Out Of Memory" && this.oomSaid) continue;
      if (g.words === "Out Of Memory") this.oomSaid = true;
      lines.push(`${g.node}: ${g.ranks.length > 1 ? "tasks" : "task"} ${formatIndexList(g.ranks)}: ${g.words}`);
    }
    return lines;
  }
}

/** The exit code srun's task has when its program could not be started: execve's errno for ebb's 127 (not found) and 126 (not executable). */
export const srunExecCode = (code: number): number => (code === 127 ? 2 : 13);

/** slurmstepd's line on a task's standard error when its program could not be started: `why` is "PROG: No such file or directory". */
export const slurmstepdExecLine = (node: string, why: string): string => `slurmstepd-${node}: error: execve(): ${why}\n`;
