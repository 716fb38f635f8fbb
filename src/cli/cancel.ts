import { ApiClientError } from "../api/client.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, jobRefArg, UsageError } from "./common.ts";
import { err } from "../util/stdio.ts";

export default defineCommand({
  meta: { name: "cancel", description: "Cancel jobs: pending ones leave the queue, running ones are killed on every node. An array's id cancels all of its tasks, 12_3 one task." },
  args: {
    jobid: { type: "positional", variadic: true, description: "Job ids: 12, an array 12, or an array task 12_3 (several may be given)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("cancel", async () => {
      if (args.jobid.length === 0) throw new UsageError("give a job id, e.g. `ebb cancel 12` (an array's id cancels all of its tasks, 12_3 one task)");
      const refs = args.jobid.map(jobRefArg);
      const c = client(args);
      let failed = 0;
      for (const ref of refs) {
        try {
          await c.cancel(ref);
        } catch (e) {
          if (!(e instanceof ApiClientError) || e.status === 0) throw e;
          err(`ebb cancel: job ${ref}: ${e.message}\n`);
          failed++;
        }
      }
      return failed > 0 ? 1 : 0;
    }),
});
