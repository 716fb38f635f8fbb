/**
 * The most ranks of one step an agent starts on its node. It starts a node's ranks in one turn of
 * its thread, one spawn each, and the credential does not cover the counts: a user's own launcher
 * (or --overcommit, up to the API's million tasks) had it spawn as many as he named. The agent
 * refuses such a launch; the controller refuses the job or step that would need one, at submission.
 */
export const MAX_RANKS_PER_NODE = 1024;

/** Why `most` ranks of a step on one node are refused (undefined: they are not). */
export function ranksPerNodeRefusal(most: number): string | undefined {
  if (most <= MAX_RANKS_PER_NODE) return undefined;
  return `${most} ranks on one node: an agent starts at most ${MAX_RANKS_PER_NODE} of a step's ranks on a node (MAX_RANKS_PER_NODE; Slurm's MaxTasksPerNode is 512)`;
}
