import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, intFlag, jobIdArg, printJson, UsageError } from "./common.ts";
import { out } from "../util/stdio.ts";
import type { ApiClient } from "../api/client.ts";
import type { JobDetail } from "../api/schemas.ts";

export default defineCommand({
  meta: {
    name: "resize",
    description: "Grow or shrink a running elastic job: ebb resize JOBID --nodes N. The job is ADAPTING until its ranks commit; --wait waits for that.",
  },
  args: {
    jobid: { type: "positional", description: "Job id", required: true },
    nodes: { type: "string", alias: "N", description: "The new number of nodes (within the job's --min-nodes/--max-nodes)", valueHint: "N" },
    wait: { type: "boolean", description: "Wait until the adaptation commits (or fails) and print how long it took" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("resize", async () => {
      const id = jobIdArg(args.jobid);
      const nodes = intFlag(args.nodes, "--nodes");
      if (nodes === undefined) throw new UsageError("give the new size: ebb resize JOBID --nodes N");
      const c = client(args);
      const r = await c.request<{ id: number; adaptationId: number }>("POST", `/v1/jobs/${id}/resize`, { nodes });
      if (!args.wait) {
        if (args.json) return printJson(r);
        out(`job ${id}: adapting to ${nodes} nodes (adaptation ${r.adaptationId})\n`);
        return;
      }
      const a = await adapted(c, id, r.adaptationId);
      if (args.json) return printJson(a);
      const took = a.times.committed !== undefined && a.times.realloc !== undefined ? ` in ${a.times.committed - a.times.realloc} ms` : "";
      out(a.state === "COMMITTED" ? `job ${id}: resized from ${a.fromNodes} to ${a.toNodes} nodes${took}\n` : `job ${id}: resize failed: ${a.message}\n`);
      return a.state === "COMMITTED" ? 0 : 1;
    }),
});

/** Adaptation `adaptationId` of job `id` once it has ended (committed or failed), polled. */
export async function adapted(c: ApiClient, id: number, adaptationId: number): Promise<JobDetail["adaptations"][number]> {
  for (;;) {
    const job = await c.job(id);
    const a = job.adaptations.find((x) => x.id === adaptationId);
    if (a && a.state !== "ADAPTING") return a;
    if (!["RUNNING", "ADAPTING"].includes(job.state)) throw new UsageError(`job ${id} ended (${job.state}) while adapting`);
    await Bun.sleep(100);
  }
}
