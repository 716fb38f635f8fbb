/** `ebb plans`: the scheduler's recent plans — what each pass planned, what the controller's re-check accepted or rejected, and what became of it. */
import type { PlanItemView, PlanView } from "../api/schemas.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { out } from "../util/stdio.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, intFlag, printJson, table } from "./common.ts";
import { localTime } from "./jobid.ts";

export default defineCommand({
  meta: {
    name: "plans",
    description:
      "The scheduler's recent plans, oldest first: each pass's spawn grants, starts and resizes with their nodes and reasons, what the controller's re-check accepted or rejected and why, and what became of each item (done, failed, abandoned); reservations too. A user sees the items of their own jobs only.",
  },
  args: {
    job: { type: "string", alias: "j", description: "Only the items of this job", valueHint: "JOBID" },
    limit: { type: "string", description: "The newest N plans (default 20, at most 1000)", valueHint: "N" },
    json: { type: "boolean", description: "Print the API's JSON (newest plan first)" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("plans", async () => {
      const { plans } = await client(args).plans({ job: intFlag(args.job, "--job", { min: 1 }), limit: intFlag(args.limit, "--limit", { min: 1, max: 1000 }) });
      if (args.json) return printJson({ plans });
      out(plansTable(plans));
    }),
});

/** One row per item and reservation, oldest plan first. */
export function plansTable(plans: readonly PlanView[]): string {
  const rows: string[][] = [];
  for (const p of [...plans].reverse()) {
    for (const i of p.items) rows.push([String(p.id), localTime(p.time), p.policy, String(i.jobId), itemText(i), i.status, i.outcome ? `${i.reason} [${i.outcome}]` : i.reason]);
    for (const r of p.reservations) rows.push([String(p.id), localTime(p.time), p.policy, String(r.jobId), `reserve ${r.nodes} node${r.nodes === 1 ? "" : "s"} by ${localTime(r.start)}`, "-", r.reason ?? ""]);
  }
  if (rows.length === 0) return "no plans (nothing was scheduled recently, or none of it was for your jobs)\n";
  return table(["PLAN", "TIME", "POLICY", "JOB", "ITEM", "STATUS", "REASON"], rows);
}

/** What an item does, in a few words: "start on node[01-02]", "grow 2 -> 4 (+node[03-04])". */
export function itemText(i: PlanItemView): string {
  if (i.kind === "start") return `start on ${compressHostlist(i.nodes)}`;
  if (i.kind === "spawn") return `spawn ${i.tasks} on ${compressHostlist(i.nodes)}`;
  const moved = i.added.length > 0 ? ` (+${compressHostlist(i.added)})` : i.removed.length > 0 ? ` (-${compressHostlist(i.removed)})` : "";
  return `${i.rule} ${i.from} -> ${i.to}${moved}`;
}
