/** `ebb hold` and `ebb release` (scontrol hold / release): pending jobs, arrays or array tasks. */
import { ApiClientError } from "../api/client.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, jobRefArg, UsageError } from "./common.ts";
import { err } from "../util/stdio.ts";

export function holdCommand(action: "hold" | "release") {
  return defineCommand({
    meta: {
      name: action,
      description: action === "hold" ? "Hold pending jobs: they are not started (reason JobHeldUser) until released. An array's id holds its pending tasks." : "Release held jobs: they are scheduled again. An array's id releases its pending tasks.",
    },
    args: {
      jobid: { type: "positional", variadic: true, description: "Job ids: 12, an array 12, or an array task 12_3" },
      ...controllerArgs,
    },
    run: ({ args }) =>
      guard(action, async () => {
        if (args.jobid.length === 0) throw new UsageError(`give a job id, e.g. \`ebb ${action} 12\``);
        const refs = args.jobid.map(jobRefArg);
        const c = client(args);
        let failed = 0;
        for (const ref of refs) {
          try {
            await c.hold(ref, action === "release");
          } catch (e) {
            if (!(e instanceof ApiClientError) || e.status === 0) throw e;
            err(`ebb ${action}: job ${ref}: ${e.message}\n`);
            failed++;
          }
        }
        return failed > 0 ? 1 : 0;
      }),
  });
}
