/** `ebb priority`: every waiting job's priority and its factors (like sprio). */
import { out } from "../util/stdio.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table } from "./common.ts";
import { UsageError } from "./errors.ts";

const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(x >= 100 ? 0 : 2));

export default defineCommand({
  meta: {
    name: "priority",
    description:
      "Every eligible waiting job's priority in queue order (like sprio): its partition's tier (a higher tier goes first), the priority, and each weighted factor (age, fair share, job size); the weights above the table",
  },
  args: {
    user: { type: "string", alias: "u", description: "Only this user's jobs", valueHint: "USER" },
    jobs: { type: "string", alias: "j", description: "Only this job (sprio -j): asks the controller for its priority alone", valueHint: "JOBID" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("priority", async () => {
      const one = args.jobs === undefined ? undefined : Number(args.jobs);
      if (one !== undefined && !(Number.isInteger(one) && one > 0)) throw new UsageError(`--jobs=${args.jobs}: expected a job id`);
      const r = await client(args).priorities(one);
      const jobs = args.user === undefined ? r.jobs : r.jobs.filter((j) => j.user === args.user);
      if (args.json) return printJson({ settings: r.settings, jobs });
      const s = r.settings;
      out(
        s.type === "submit"
          ? "queue order: submit order (priority type submit), partition tiers first\n"
          : `weights: fair share ${num(s.weights.fairshare)}, age ${num(s.weights.age)} (whole at ${num(s.maxAge)} s), job size ${num(s.weights.jobSize)}${s.favorSmall ? " (small first)" : ""}; usage half-life ${num(s.halfLife)} s\n`,
      );
      if (jobs.length === 0) return out("no eligible job is waiting\n");
      out(table(["JOBID", "USER", "PARTITION", "TIER", "PRIORITY", "AGE", "FAIRSHARE", "JOBSIZE"], jobs.map((j) => [String(j.jobId), j.user, j.partition ?? "-", String(j.tier), num(j.priority), num(j.age), num(j.fairshare), num(j.jobSize)])));
    }),
});
