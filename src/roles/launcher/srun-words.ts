/**
 * How Slurm 22.05's srun says a task's end (src/srun/libsrun/launch.c _task_finish, checked side
 * by side): `NODE: task N: Exited with exit code X`, `NODE: task N: Killed` (strsignal's words for
 * the signal), `NODE: task N: Out Of Memory`; a program its node could not start ends the task with
 * execve's errno as its exit code (No such file or directory: 2, Permission denied: 13), where ebb
 * run's ranks end 127 and 126 as a shell's commands do. Pure.
 */

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

/** srun's line (after "srun: error: ") for a task that ended badly. */
export function srunTaskEnd(e: { node: string; rank: number; code: number; signal?: string; oom?: boolean }): string {
  const what = e.oom ? "Out Of Memory" : e.signal ? (STRSIGNAL[e.signal] ?? `Unknown signal ${e.signal}`) : `Exited with exit code ${e.code}`;
  return `${e.node}: task ${e.rank}: ${what}`;
}

/** The exit code srun's task has when its program could not be started: execve's errno for ebb's 127 (not found) and 126 (not executable). */
export const srunExecCode = (code: number): number => (code === 127 ? 2 : 13);
