import { ApiClientError } from "../api/client.ts";
import { parseSignalSpec } from "../domain/job-options.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, jobRefArg, UsageError } from "./common.ts";
import { err } from "../util/stdio.ts";

/** scancel -s SIG: a signal's name (USR1, SIGUSR1) or number, as the API names it (SIGUSR1). */
export function signalName(value: string): string {
  const r = /^[A-Za-z0-9]+$/.test(value.trim()) ? parseSignalSpec(value) : { error: `"${value}" is not a signal name or number, e.g. USR1` };
  if ("error" in r) throw new UsageError(`--signal ${value}: ${r.error}`);
  return r.signal;
}

export default defineCommand({
  meta: {
    name: "cancel",
    description:
      "Cancel jobs: pending ones leave the queue, running ones are killed on every node. An array's id cancels all of its tasks, 12_3 one task. With --signal (scancel -s), send a signal to a running job instead: to its steps' processes, its batch shell (--batch), or both (--full).",
  },
  args: {
    jobid: { type: "positional", variadic: true, description: "Job ids: 12, an array 12, or an array task 12_3 (several may be given)" },
    signal: { type: "string", alias: "s", description: "Do not cancel: send this signal (USR1, SIGUSR1, 10) to the job's steps, as scancel --signal", valueHint: "SIG" },
    batch: { type: "boolean", alias: "b", description: "With --signal: to the batch shell only, not the steps (scancel -b)" },
    full: { type: "boolean", alias: "f", description: "With --signal: to the batch shell and the steps (scancel -f)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("cancel", async () => {
      if (args.jobid.length === 0) throw new UsageError("give a job id, e.g. `ebb cancel 12` (an array's id cancels all of its tasks, 12_3 one task)");
      if ((args.batch || args.full) && args.signal === undefined) throw new UsageError(`${args.batch ? "--batch" : "--full"} says where --signal goes; give --signal too`);
      const signal = args.signal === undefined ? undefined : signalName(args.signal);
      const to = args.full ? "full" : args.batch ? "batch" : "steps";
      const refs = args.jobid.map(jobRefArg);
      const c = client(args);
      let failed = 0;
      for (const ref of refs) {
        try {
          if (signal !== undefined) await c.signal(ref, { signal, to });
          else await c.cancel(ref);
        } catch (e) {
          if (!(e instanceof ApiClientError) || e.status === 0) throw e;
          err(`ebb cancel: job ${ref}: ${e.message}\n`);
          failed++;
        }
      }
      return failed > 0 ? 1 : 0;
    }),
});
