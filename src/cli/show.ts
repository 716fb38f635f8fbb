import { defineCommand } from "./command.ts";
import { compressHostlist } from "../util/hostlist.ts";
import { formatDuration } from "../util/time.ts";
import { client, controllerArgs, guard, jobRefArg, printJson } from "./common.ts";
import { jobLabel } from "./jobid.ts";
import { elapsed, nodesColumn } from "./queue.ts";
import { out } from "../util/stdio.ts";
import { shellQuote } from "../util/shell-quote.ts";
import { cfgSection } from "./cfg-table.ts";
import { itemText } from "./plans.ts";
import type { JobDetail } from "../api/schemas.ts";
import { gpuTime, mib, requestText, shareText, usageText } from "./resource-text.ts";

export default defineCommand({
  meta: { name: "show", description: "Show one job: its settings, allocation history, steps, the scheduler's plan items and events" },
  args: {
    jobid: { type: "positional", description: "Job id, or an array task such as 12_3", required: true },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("show", async () => {
      const j = await client(args).job(jobRefArg(args.jobid));
      if (args.json) return printJson(j);
      const field = (k: string, v: unknown) => (v === null || v === undefined || v === "" ? "" : `${k.padEnd(12)} ${v}\n`);
      let text = "";
      text += field("JobId", j.id);
      if (j.arrayJobId !== null) text += field("ArrayTask", `${jobLabel(j)}${j.arrayLimit ? ` (at most ${j.arrayLimit} tasks at once)` : ""}`);
      text += field("Name", j.name);
      text += field("User", j.user);
      if (j.submittedBy !== null) text += field("SubmittedBy", `job ${j.submittedBy}`);
      text += field("Kind", j.kind);
      text += field("State", j.state + (j.reason ? ` (${j.reason}${j.reasonDetail && j.reasonDetail !== j.reason ? `: ${j.reasonDetail}` : ""})` : ""));
      text += field("ExitCode", j.exitCode);
      text += field("Held", j.held ? "yes (ebb release to let it run)" : "");
      text += field("Dependency", j.dependency);
      text += field("Begin", j.beginTime);
      text += field("Nodes", j.minNodes === j.maxNodes ? nodesColumn(j) : `${j.nodes} (range ${j.minNodes}-${j.maxNodes}${j.elastic ? ", elastic" : ""}${j.resizes ? `, ${j.resizes} resizes` : ""})`);
      text += field("Sizes", j.sizes ? j.sizes.join(",") : "");
      text += field("ReqNodes", j.nodelist.length > 0 ? compressHostlist(j.nodelist) : "");
      text += field("ExcNodes", j.exclude.length > 0 ? compressHostlist(j.exclude) : "");
      text += field("Tasks", `${j.tasks ?? (j.tasksPerNode ? `${j.tasksPerNode} per node` : "one per node")}${j.overcommit ? " (overcommit)" : ""}`);
      text += field("Resources", requestText(j.resources));
      text += field("NodeList", j.allocation.length > 0 ? compressHostlist(j.allocation) : "");
      text += field("TimeLimit", formatDuration(j.timeLimit));
      text += field("RunTime", elapsed(j));
      text += field("Usage", usageText(j.usage));
      text += field("GpuTime", gpuTime(j));
      text += field("Submitted", j.submitTime);
      text += field("Started", j.startTime);
      text += field("Ended", j.endTime);
      text += field("Private", j.private ? `${j.user ?? "another user"}'s job: its command, directory, files, environment and events are theirs to see` : "");
      text += field("WorkDir", j.cwd);
      text += field("Output", j.output);
      text += field("Error", j.error);
      text += field("Command", j.argv?.join(" "));
      text += field("Args", j.args ? shellQuote(j.args) : "");
      if (j.elastic && j.elasticSettings) text += field("Settings", Object.entries(j.elasticSettings).map(([k, v]) => `${k}=${v}`).join(","));
      if (j.elastic || j.samples.length > 0) text += field("MTCT", mtctText(j));
      if (j.shares.length > 0) {
        text += `\n${j.endTime === null ? "Allocation" : "Allocation at the end"}:\n`;
        for (const s of j.shares) text += `  ${shareText(s)}\n`;
      }
      if (j.allocationHistory.length > 0) {
        text += "\nAllocation history:\n";
        for (const a of j.allocationHistory) text += `  ${a.node.padEnd(12)} ${a.since} -> ${a.until ?? "now"}${a.cores === null ? "" : `  cores ${a.cores}  mem ${mib(a.memMiB ?? 0)}${a.gpus?.length ? `  gpus ${a.gpus.join(",")}` : ""}`}\n`;
      }
      if (j.steps.length > 0) {
        text += "\nSteps:\n";
        for (const s of j.steps) text += `  ${j.id}.${s.stepId}  ${s.state.padEnd(10)} ${String(s.tasks).padStart(4)} tasks on ${compressHostlist(s.nodes)}  exit ${s.exitCode ?? "-"}  ${s.argv.join(" ")}\n`;
      }
      if (j.adaptations.length > 0) {
        text += "\nAdaptations:\n";
        for (const a of j.adaptations) {
          const t = a.times;
          const took = t.committed !== undefined && t.realloc !== undefined ? `${t.committed - t.realloc} ms` : "-";
          const steps = ["realloc", "spawned", "ready", "notified", "agreed", "written", "exited", "committed", "released"]
            .filter((k) => t[k] !== undefined)
            .map((k) => `${k} +${t[k]! - t.requested!}`)
            .join(" ");
          text += `  ${a.id}  ${`${a.fromNodes} -> ${a.toNodes} nodes`.padEnd(16)} ${a.state.padEnd(10)} ${String(took).padStart(7)}  ${a.reason}${a.message ? `: ${a.message}` : ""}\n`;
          if (steps) text += `      ms after the request: ${steps}\n`;
          // A checkpoint-restart's phases (docs/adaptation.md §12): a resize writes, every restart starts the new step and reads.
          if (t.exited !== undefined && t.spawned !== undefined && t.ready !== undefined) {
            const write = t.written !== undefined && t.agreed !== undefined ? `write ${t.written - t.agreed} ms, ` : "";
            text += `      checkpoint-restart: ${write}restart ${t.spawned - (t.written ?? t.exited)} ms, read ${t.ready - t.spawned} ms\n`;
          }
        }
      }
      if (j.limitHistory.length > 0) {
        text += "\nTime limit history:\n";
        for (const c of j.limitHistory) text += `  ${c.time}  ${formatDuration(c.from)} -> ${formatDuration(c.to)}  ${c.reason}\n`;
      }
      if (j.plans.length > 0) {
        text += "\nScheduler plans:\n";
        for (const i of j.plans) text += `  ${i.time}  plan ${i.planId} (${i.policy})  ${itemText(i)}  ${i.status}: ${i.reason}${i.outcome ? ` [${i.outcome}]` : ""}\n`;
      }
      if (j.program) text += programText(j.program);
      if (j.samples.length > 0) {
        text += `\nTiming samples (MTCT per ${j.sampleInterval} s window, latest last):\n  `;
        text += j.samples.slice(-10).map((s) => s.mtct.toFixed(4)).join("  ") + "\n";
      }
      text += cfgSection(j.cfg);
      text += "\nEvents:\n";
      for (const e of j.events) text += `  ${e.time}  ${e.kind.padEnd(10)} ${e.message}\n`;
      out(text);
    }),
});

/** The MTCT line, from the same samples the "Timing samples" list shows. */
export function mtctText(j: Pick<JobDetail, "mtct" | "samples" | "sampleInterval" | "endTime">): string {
  const latest = j.samples.at(-1);
  if (latest === undefined) return j.endTime === null ? "(no timing samples yet)" : "(no timing samples)";
  const what = "communication / computation";
  if (j.mtct !== null) return `${j.mtct.toFixed(4)}  (${what}, latest ${j.sampleInterval} s window)`;
  return `${latest.mtct.toFixed(4)}  (${what}, the last sample, at ${latest.time}${j.endTime === null ? "; none since" : ""})`;
}

/** The phase list of an EPOP program, `>` at the current phase, a bar for a bounded elastic phase. */
export function programText(p: NonNullable<JobDetail["program"]>): string {
  let text = `\nProgram ${p.name} (EPOP):\n`;
  for (const ph of p.phases) {
    const here = ph.pc === p.pc;
    let line = `  ${here ? ">" : " "} ${String(ph.pc).padStart(2)}  ${ph.kind.padEnd(7)} ${ph.name}`;
    if (here && p.iteration !== null) {
      if (p.bound !== null && p.bound > 0) {
        const frac = Math.min(1, p.iteration / p.bound);
        const fill = Math.round(frac * 20);
        line += `  [${"#".repeat(fill)}${".".repeat(20 - fill)}] ${p.iteration}/${p.bound}`;
        if (p.remainingSeconds !== null) line += `  ~${p.remainingSeconds} s left`;
      } else line += `  iteration ${p.iteration}`;
    }
    text += `${line}\n`;
  }
  return text;
}
