/** `ebb step-root` (hidden): the step root of an elastic command job, started by the controller on its host. */
import { defineCommand } from "./command.ts";
import { guard, UsageError } from "./common.ts";
import { MAX_STEP_ROOT_START_BYTES, StepRootStart } from "../proto/step-root.ts";
import { runCommandRoot } from "../roles/launcher/command-root.ts";
import { isCommandStart } from "../roles/launcher/launch.ts";

/** stdin, up to `max` bytes. */
async function readStdin(max: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of Bun.stdin.stream()) {
    bytes += chunk.length;
    if (bytes > max) throw new UsageError(`stdin is over ${max} bytes; the controller writes a step root's start there`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export default defineCommand({
  meta: {
    name: "step-root",
    description: "Run the step root of an elastic command job (the controller starts it, with the job's start as JSON on stdin)",
    hidden: true,
  },
  args: {},
  run: () =>
    guard("step-root", async () => {
      let json: unknown;
      try {
        json = JSON.parse(await readStdin(MAX_STEP_ROOT_START_BYTES));
      } catch (e) {
        throw e instanceof UsageError ? e : new UsageError(`stdin is not JSON (${(e as Error).message}); the controller writes a step root's start there`);
      }
      const start = StepRootStart.safeParse(json);
      if (!start.success) throw new UsageError(`invalid start on stdin: ${start.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
      const job = start.data.job;
      if (!isCommandStart(job)) throw new UsageError("invalid start on stdin: job: a command job with argv and a step credential");
      return runCommandRoot({ ...start.data, job });
    }),
});
