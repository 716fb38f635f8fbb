/**
 * What of a job only its owner and admins see (domain/scope.ts `sightOf`): the command, the
 * directory, the files it writes and the environment, and whatever may name them (an ended job's
 * reason, its events, its adaptations' messages, its CFG and program). Other users get the rest,
 * as Slurm shows everyone the queue.
 */
import type { JobDetail, JobView } from "./schemas.ts";

export function publicView<J extends JobView>(j: J): J {
  return { ...j, private: true, argv: null, cwd: "", output: null, error: null, reason: j.state === "PENDING" ? j.reason : null };
}

export function publicDetail(j: JobDetail): JobDetail {
  return {
    ...publicView(j),
    script: null,
    args: null,
    env: {},
    events: [],
    steps: j.steps.map((s) => ({ ...s, argv: [], name: null })),
    adaptations: j.adaptations.map((a) => ({ ...a, message: null })),
    cfg: null,
    program: null,
  };
}
