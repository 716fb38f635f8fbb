/**
 * The `ebb` command that job processes find first on their PATH, so that a batch script can run
 * `ebb run`, with Slurm's `srun`, `scontrol`, `sbatch`, `scancel`, `squeue`, `sacct`, `sinfo`, `sstat` and `seff` beside it (a Slurm script's steps, host lists, jobs); and a `bun` command they find last, so that `bun app.ts` runs on a node with no bun
 * installed: it is `ebb exec --bun`, this ebb's own runtime with ebb/comm and ebb/epop inside
 * (a bun on the job's PATH comes first and wins). Both must be reachable by the job's user: an
 * agent running as root keeps them under /run/ebb (0755 directories), not in its state dir, which
 * is root's alone; other agents keep them in their state dir, whose owner runs every job.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ebbCommand, isCompiled } from "../../util/self.ts";
import { agentIsRoot } from "../identity.ts";
import { pidAlive } from "../../util/pid.ts";

/** Where a root agent keeps what its jobs' users must reach (0755 directories): its state dir is root's alone. */
export const RUN_DIR = "/run/ebb";


/** Directories of agents that are gone (their names end with the agent's pid). */
function sweep(): void {
  let names: string[];
  try {
    names = readdirSync(RUN_DIR);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^agent-.+-(\d+)$/.exec(name)?.[1]);
    if (pid > 0 && pid !== process.pid && !pidAlive(pid)) rmSync(join(RUN_DIR, name), { recursive: true, force: true });
  }
}

/** The Slurm commands a job finds on its PATH, and the ebb command each runs. */
const SLURM_COMMANDS: Record<string, string> = { srun: "srun", scontrol: "scontrol", sbatch: "sbatch", scancel: "scancel", squeue: "squeue", sacct: "sacct", sinfo: "sinfo", sstat: "sstat", seff: "seff" };

/** Slurm's commands in `dir`, each running ebb's (also salloc's, for the command it runs). */
export function writeSlurmCommands(dir: string): void {
  for (const [slurm, ebb] of Object.entries(SLURM_COMMANDS))
    script(join(dir, slurm), `#!/bin/sh\n# ${slurm} in an ebb job: ebb ${ebb}.\nexec ${quoted([...ebbCommand(), ebb])} "$@"\n`);
}

/** The file a job's bash reads after a login shell's start-up files (BASH_ENV): see bashEnv. */
export const BASH_ENV_FILE = "bash-env";

/**
 * A login shell (`#!/bin/bash -l`, `--login`: common in Slurm scripts) reads /etc/profile, which
 * sets PATH anew, dropping ebb's commands: srun would be Slurm's, or none. Bash reads BASH_ENV
 * after those files in every non-interactive shell, so this puts them back first (and bun's
 * fallback last) when they are missing, then reads the job's own BASH_ENV, if it had one; untraced
 * under `bash -x`, whose tracing it turns on again after.
 */
function bashEnv(dir: string, fallback: string): string {
  const q = quoted([dir]);
  const f = quoted([fallback]);
  // A traced script (#!/bin/bash -x) would print these lines, which Slurm's does not: tracing is off while they run (the group's own trace line goes to /dev/null).
  return `# ebb: its Slurm commands first on PATH again after a login shell's /etc/profile.\n{ case $- in *x*) __ebb_x=1; set +x ;; *) __ebb_x= ;; esac; } 2>/dev/null\ncase ":$PATH:" in *:${q}:*) ;; *) PATH=${q}:"$PATH"; export PATH ;; esac\ncase ":$PATH:" in *:${f}:*) ;; *) PATH="$PATH":${f}; export PATH ;; esac\nif [ -n "\${EBB_BASH_ENV-}" ]; then . "$EBB_BASH_ENV"; fi\ncase $__ebb_x in 1) unset __ebb_x; set -x ;; *) unset __ebb_x ;; esac\n`;
}

const quoted = (argv: string[]) => argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");

/** A new file each time (never rewritten in place: a shell may be reading the old one). */
function script(path: string, text: string): void {
  rmSync(path, { force: true });
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/**
 * Writes the commands: `dir` (ebb and the Slurm commands) goes first on job processes' PATH, `fallback` (bun) last;
 * `remove` takes them away when the agent stops.
 */
export function installEbbCommand(stateDir: string, node: string): { dir: string; fallback: string; remove(): void } {
  let dir = join(stateDir, "bin");
  if (agentIsRoot()) {
    sweep();
    dir = join(RUN_DIR, `agent-${node}-${process.pid}`);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(RUN_DIR, 0o755);
    chmodSync(dir, 0o755);
  } else mkdirSync(dir, { recursive: true });
  const path = join(dir, "ebb");
  if (isCompiled()) {
    rmSync(path, { force: true });
    symlinkSync(process.execPath, path);
  } else script(path, `#!/bin/sh\nexec ${quoted(ebbCommand())} "$@"\n`);
  // Slurm scripts' commands act on this cluster, not on a Slurm the host may also run (whose job of
  // the same id `scancel $SLURM_JOB_ID` would cancel): srun a step of the job (cli/srun.ts), scontrol
  // its host lists (cli/scontrol.ts), sbatch and scancel ebb's submit (with sbatch's defaults) and cancel, squeue ebb queue (cli/squeue.ts),
  // sacct ebb history (cli/sacct.ts), sinfo its nodes (cli/sinfo.ts); sstat is refused (cli/sstat.ts).
  writeSlurmCommands(dir);
  script(join(dir, BASH_ENV_FILE), bashEnv(dir, join(dir, "fallback")));
  const fallback = join(dir, "fallback");
  mkdirSync(fallback, { recursive: true, mode: 0o755 });
  chmodSync(fallback, 0o755);
  script(join(fallback, "bun"), `#!/bin/sh\n# No bun on this node's PATH: ebb's own runtime, with ebb/comm and ebb/epop.\nexec ${quoted([...ebbCommand(), "exec", "--bun", "--"])} "$@"\n`);
  return { dir, fallback, remove: () => agentIsRoot() && rmSync(dir, { recursive: true, force: true }) };
}
