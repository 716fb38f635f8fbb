import { defineCommand } from "citty";
import { ApiClientError } from "../api/client.ts";
import { client, controllerArgs, guard, jobIdArg } from "./common.ts";
import { err } from "../util/stdio.ts";

export default defineCommand({
  meta: { name: "cancel", description: "Cancel jobs: pending ones leave the queue, running ones are killed on every node" },
  args: {
    jobid: { type: "positional", description: "Job id (several may be given)", required: true },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("cancel", async () => {
      const ids = args._.length > 0 ? args._ : [args.jobid];
      const c = client(args);
      let failed = 0;
      for (const text of ids) {
        const id = jobIdArg(text);
        try {
          await c.cancel(id);
        } catch (e) {
          if (!(e instanceof ApiClientError) || e.status === 0) throw e;
          err(`ebb cancel: job ${id}: ${e.message}\n`);
          failed++;
        }
      }
      return failed > 0 ? 1 : 0;
    }),
});
