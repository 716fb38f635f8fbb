import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table, textFlag } from "./common.ts";
import { windowArgs, windowFlags } from "./window.ts";
import { MAX_USER, type UsageView } from "../api/schemas.ts";
import { localTime } from "./jobid.ts";
import { out } from "../util/stdio.ts";

const hours = (seconds: number) => (seconds / 3600).toFixed(2);

/** sreport's table: a line per user, the most core-hours first, GPU-hours if any GPU was held, each one's share of the core-hours, and the total. */
export function usageTable(u: UsageView): string {
  const share = (s: number) => (u.total.coreSeconds > 0 ? `${((100 * s) / u.total.coreSeconds).toFixed(1)}%` : "");
  const gpus = u.total.gpuSeconds > 0;
  const row = (name: string, x: UsageView["total"]) => [name, String(x.jobs), hours(x.nodeSeconds), hours(x.coreSeconds), ...(gpus ? [hours(x.gpuSeconds)] : []), share(x.coreSeconds)];
  const rows = u.users.map((x) => row(x.user || "(none)", x));
  if (u.users.length > 1) rows.push(row("TOTAL", u.total));
  const head = `Usage from ${localTime(u.since)} to ${localTime(u.until)}\n`;
  return u.users.length === 0 ? `${head}no job held nodes then\n` : head + table(["USER", "JOBS", "NODE-HOURS", "CORE-HOURS", ...(gpus ? ["GPU-HOURS"] : []), "SHARE"], rows);
}

export default defineCommand({
  meta: {
    name: "usage",
    description:
      "What each user used over a time window, like sreport's UserUtilizationByAccount: jobs that ran, node-hours, core-hours (the job's cores on a node times the hours held) and, if any GPU was held, GPU-hours (the job's GPUs times the hours held) within the window",
  },
  args: {
    ...windowArgs({ since: "Window start", until: "Window end" }),
    user: { type: "string", alias: "u", description: "Only this user", valueHint: "USER" },
    json: { type: "boolean", description: "Print the API's JSON (seconds)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("usage", async () => {
      const u = await client(args).usage({ ...windowFlags(args), user: textFlag(args.user, "--user", MAX_USER, "user names") });
      if (args.json) return printJson(u);
      out(usageTable(u));
    }),
});
