import { defineArgs } from "./args.ts";
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { defineCommand, parseArgs } from "citty";
import { splitAtCommand } from "./argv.ts";
import { client, controllerArgs, currentEnv, durationFlag, elasticArgs, elasticFields, guard, intFlag, printJson, UsageError } from "./common.ts";
import { directiveArgs } from "./directives.ts";
import { out } from "../util/stdio.ts";

const jobArgs = defineArgs({
  nodes: { type: "string", alias: "N", description: "Number of nodes", valueHint: "N" },
  ntasks: { type: "string", alias: ["n"], description: "Number of tasks (EBB_NTASKS; steps default to it)", valueHint: "N" },
  "tasks-per-node": { type: "string", description: "Tasks per node", valueHint: "K" },
  time: { type: "string", alias: "t", description: "Time limit: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS", valueHint: "TIME" },
  output: { type: "string", alias: "o", description: "Output file; %j is the job id, %x the name (default ebb-%j.out)", valueHint: "FILE" },
  "job-name": { type: "string", alias: "J", description: "Job name (default: the script's file name)", valueHint: "NAME" },
  ...elasticArgs,
});

const args = defineArgs({
  ...jobArgs,
  parsable: { type: "boolean", description: "Print only the job id" },
  json: { type: "boolean", description: "Print {\"id\": N}" },
  ...controllerArgs,
});

export default defineCommand({
  meta: { name: "submit", description: "Submit a batch script: ebb submit [-N ..] [-n ..] [-t ..] [-o FILE] script.sh. '#EBB <flags>' lines at the top of the script set flags too; the command line wins." },
  args: { ...args, script: { type: "positional", description: "The batch script", required: false } },
  run: ({ rawArgs }) =>
    guard("submit", async () => {
      const { options, command } = splitAtCommand(rawArgs, args);
      const cli = parseArgs<typeof args>(options, args);
      const [path, ...extra] = command;
      if (!path) throw new UsageError("no script given; usage: ebb submit [flags] script.sh");
      if (extra.length > 0) throw new UsageError(`unexpected arguments after the script: ${extra.join(" ")}; put settings in #EBB lines or flags before the script`);
      let script: string;
      try {
        script = readFileSync(path, "utf8");
      } catch (e) {
        throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
      }
      const fromScript = parseArgs<typeof jobArgs>(directiveArgs(script), jobArgs);
      const pick = <K extends keyof typeof jobArgs>(k: K) => (cli[k] as string | undefined) ?? (fromScript[k] as string | undefined);
      const flag = (k: "elastic") => cli[k] === true || fromScript[k] === true;
      const req = {
        script,
        name: pick("job-name") ?? basename(path),
        nodes: intFlag(pick("nodes"), "--nodes"),
        ...elasticFields({ elastic: flag("elastic"), "min-nodes": pick("min-nodes"), "max-nodes": pick("max-nodes"), "sample-interval": pick("sample-interval"), "elastic-settings": pick("elastic-settings") }),
        tasks: intFlag(pick("ntasks"), "--ntasks"),
        tasksPerNode: intFlag(pick("tasks-per-node"), "--tasks-per-node"),
        timeLimit: durationFlag(pick("time"), "--time"),
        output: pick("output") ? resolve(pick("output")!) : undefined,
        cwd: process.cwd(),
        env: currentEnv(),
      };
      const { id } = await client(cli).submit(req);
      if (cli.json) printJson({ id });
      else if (cli.parsable) out(`${id}\n`);
      else out(`Submitted batch job ${id}\n`);
    }),
});
