import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, UsageError } from "./common.ts";
import { exitStatus, jobIds, waitForJobs } from "./waiting.ts";
import { err } from "../util/stdio.ts";

export default defineCommand({
  meta: {
    name: "wait",
    description: "Wait until jobs have ended (an array's id: all of its tasks). Exits 0 if all completed, else with the highest exit code of the others (1 if they have none); says which did not complete.",
  },
  args: {
    jobid: { type: "positional", variadic: true, description: "Job ids: 12, an array 12, or an array task 12_3" },
    json: { type: "boolean", description: "Print the ended jobs as JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("wait", async () => {
      if (args.jobid.length === 0) throw new UsageError("give a job id, e.g. `ebb wait 12`");
      const c = client(args);
      const ids: number[] = [];
      for (const ref of args.jobid) ids.push(...(await jobIds(c, ref)));
      const ended = await waitForJobs(c, ids);
      if (args.json) printJson({ jobs: ended });
      else for (const j of ended) if (j.state !== "COMPLETED") err(`ebb wait: job ${j.arrayJobId !== null ? `${j.arrayJobId}_${j.arrayTaskId}` : j.id} ${j.state}${j.exitCode !== null ? ` (exit code ${j.exitCode})` : ""}${j.reason ? `: ${j.reason}` : ""}\n`);
      return Math.max(0, ...ended.map(exitStatus));
    }),
});
