/**
 * A job's file-creation mask, as Slurm carries it: SLURM_UMASK in the job's environment, the
 * submitting shell's umask (`ebb submit`, `ebb run` and `srun` set it). Without it a job's files
 * were made with the agent's umask (022): a user whose umask is 077 got output and files any
 * other user of the node could read.
 */

export const UMASK_VAR = "SLURM_UMASK";

/** The calling process's umask as Slurm writes it ("0022"). */
export function currentUmask(): string {
  return `0${process.umask().toString(8).padStart(3, "0")}`;
}

/** The mask SLURM_UMASK names in `env` (three or four octal digits), or undefined. */
export function umaskOf(env: Record<string, string>): number | undefined {
  const text = env[UMASK_VAR];
  return text !== undefined && /^0?[0-7]{3}$/.test(text) ? parseInt(text, 8) : undefined;
}

/** A job's output file is made as its other files are: with its umask, and the maker's own (022 at most). */
export const outputMode = (env: Record<string, string>): number => 0o666 & ~(umaskOf(env) ?? 0o022);

/** The agent's own umask, read once (reading it sets it for a moment, process-wide). */
const AGENT_UMASK = process.umask();

/**
 * A process the agent starts as itself (no user to drop to): the environment without SLURM_UMASK,
 * and argv through a shell that takes the job's mask first when it is not the agent's.
 */
export function withOwnUmask(argv: readonly string[], env: Record<string, string>): { argv: readonly string[]; env: Record<string, string> } {
  if (env[UMASK_VAR] === undefined) return { argv, env };
  const mask = umaskOf(env);
  const { [UMASK_VAR]: _, ...rest } = env;
  if (mask === undefined || mask === AGENT_UMASK) return { argv, env: rest };
  return { argv: ["/bin/sh", "-c", 'umask "$0" && exec "$@"', `0${mask.toString(8).padStart(3, "0")}`, ...argv], env: rest };
}

/**
 * After the drop to the job's user, in the shell that starts its program: the job's mask (sh); the
 * variable goes, as slurmstepd unsets it (an `ebb run` or `ebb submit` of the job sets its own).
 */
export const APPLY_UMASK_SH = `case "\${${UMASK_VAR}-}" in [0-7][0-7][0-7]|0[0-7][0-7][0-7]) umask "$${UMASK_VAR}" ;; esac; unset ${UMASK_VAR}`;
