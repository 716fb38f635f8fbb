/** The subcommands: each loads its own module (one chunk each in the compiled binary) when run. */
import type { ArgsDef, CommandDef } from "./command.ts";

type Loader = () => Promise<{ default: CommandDef<any> }>;

export const COMMANDS: Record<string, { summary: string; load: Loader; hidden?: boolean }> = {
  up: { summary: "Start a whole local cluster in this process: a controller and N agents on loopback", load: () => import("./up.ts") },
  controller: { summary: "Run the controller: HTTP API, agent/launcher WebSockets, SQLite job store, scheduler", load: () => import("./controller.ts") },
  agent: { summary: "Run a node agent: registers the node, starts and kills job processes, serves step trees", load: () => import("./agent.ts") },
  run: { summary: "Run a parallel program (like srun): outside a job it asks for an allocation", load: () => import("./run.ts") },
  submit: { summary: "Submit a batch script (like sbatch); #EBB or #SBATCH lines set flags too", load: () => import("./submit.ts") },
  queue: { summary: "List pending and running jobs (like squeue; --all: finished ones too)", load: () => import("./queue.ts") },
  show: { summary: "Show one job: settings, allocation history, steps and events", load: () => import("./show.ts") },
  cancel: { summary: "Cancel jobs, arrays or array tasks (like scancel)", load: () => import("./cancel.ts") },
  hold: { summary: "Hold pending jobs: they are not started until released", load: () => import("./hold.ts") },
  release: { summary: "Release held jobs", load: () => import("./release.ts") },
  wait: { summary: "Wait for jobs to end; exits with the first failure's exit code", load: () => import("./wait.ts") },
  history: { summary: "Finished and active jobs over a time window (like sacct)", load: () => import("./history.ts") },
  usage: { summary: "What each user used over a time window: jobs, node- and core-hours (like sreport)", load: () => import("./usage.ts") },
  plans: { summary: "The scheduler's recent plans: what it planned, accepted or rejected, and why", load: () => import("./plans.ts") },
  resize: { summary: "Grow or shrink a running elastic job", load: () => import("./resize.ts") },
  nodes: { summary: "List nodes with their state, size and job", load: () => import("./nodes.ts") },
  partitions: { summary: "List partitions: their nodes, limits, tier and jobs (like sinfo)", load: () => import("./partitions.ts") },
  priority: { summary: "Waiting jobs' priorities and each factor: age, fair share, size (like sprio)", load: () => import("./priority.ts") },
  share: { summary: "Each user's shares, usage and fair-share factor (like sshare)", load: () => import("./share.ts") },
  drain: { summary: "Drain nodes: they take no new work; jobs on them run to their end", load: () => import("./drain.ts") },
  resume: { summary: "Resume drained nodes: they are scheduled again", load: () => import("./resume.ts") },
  token: { summary: "Issue a user's API token (admins only): ebb token create --user NAME [--admin]", load: () => import("./token.ts") },
  mpicc: { summary: "Compile a C MPI program with ebb.h and libebb (malleable by checkpoint and restart): wraps mpicc", load: async () => ({ default: (await import("./mpicc.ts")).compilerCommand("mpicc") }) },
  mpicxx: { summary: "Compile a C++ MPI program with ebb.h and libebb: wraps mpicxx", load: async () => ({ default: (await import("./mpicc.ts")).compilerCommand("mpicxx") }) },
  mpif90: { summary: "Compile a Fortran MPI program with the ebb module and libebb: wraps mpif90", load: async () => ({ default: (await import("./mpicc.ts")).compilerCommand("mpif90") }) },
  exec: { summary: "Run a TypeScript or JavaScript program with ebb/comm and ebb/epop from this ebb (no bun needed)", load: () => import("./exec.ts") },
  sim: { summary: "Replay a workload trace through the scheduling policies on a simulated cluster", load: () => import("./sim.ts") },
  sbatch: { summary: "sbatch: ebb submit, which takes sbatch's flags and #SBATCH lines (on every job process's PATH too)", load: async () => ({ default: (await import("./submit.ts")).submitCommand(true) }), hidden: true },
  salloc: { summary: "salloc: an allocation with sbatch's flags, and a command in it (default: your shell) whose srun runs steps there; it ends with the command", load: () => import("./salloc.ts"), hidden: true },
  scancel: { summary: "scancel: ebb cancel, which takes scancel's flags (on every job process's PATH too)", load: () => import("./cancel.ts"), hidden: true },
  srun: { summary: "srun inside an ebb job: a step of it, with srun's flags (on every job process's PATH)", load: () => import("./srun.ts"), hidden: true },
  sacct: { summary: "sacct inside an ebb job: ebb history with sacct's flags (on every job process's PATH)", load: () => import("./sacct.ts"), hidden: true },
  squeue: { summary: "squeue inside an ebb job: ebb queue with squeue's flags (on every job process's PATH)", load: () => import("./squeue.ts"), hidden: true },
  sinfo: { summary: "sinfo inside an ebb job: this cluster's partitions and nodes, with sinfo's flags (on every job process's PATH)", load: () => import("./sinfo.ts"), hidden: true },
  seff: { summary: "seff inside an ebb job: a job's CPU and memory efficiency in seff's layout (on every job process's PATH)", load: () => import("./seff.ts"), hidden: true },
  sstat: { summary: "sstat inside an ebb job: refused, naming where ebb has a job's statistics (on every job process's PATH)", load: () => import("./sstat.ts"), hidden: true },
  scontrol: { summary: "scontrol inside an ebb job: show hostnames / hostlist (on every job process's PATH)", load: () => import("./scontrol.ts"), hidden: true },
  "step-root": { summary: "The step root of an elastic command job (started by the controller)", load: () => import("./step-root.ts"), hidden: true },
  "warm-rank": { summary: "A pre-started rank an agent keeps warm for grows (started by the agent)", load: () => import("./warm-rank.ts"), hidden: true },
  completion: { summary: "Print a shell completion script: ebb completion bash|zsh|fish", load: () => import("./completion.ts") },
};

export async function loadCommand(name: string): Promise<CommandDef<ArgsDef>> {
  return (await COMMANDS[name]!.load()).default as CommandDef<ArgsDef>;
}
