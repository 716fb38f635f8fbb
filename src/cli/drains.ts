/** `ebb drain` and `ebb resume` (scontrol update state=drain / resume): nodes that take no new work. */
import { ApiClientError } from "../api/client.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, UsageError } from "./common.ts";
import { err, out } from "../util/stdio.ts";

export function drainCommand(action: "drain" | "resume") {
  return defineCommand({
    meta: {
      name: action,
      description:
        action === "drain"
          ? "Drain nodes: they take no new work; jobs on them run to their end (ebb nodes shows DRAINING, then DRAINED)"
          : "Resume drained nodes: they are scheduled again",
    },
    args: {
      node: { type: "positional", variadic: true, description: "Node names" },
      ...(action === "drain"
        ? ({
            reason: { type: "string", description: "Why (shown by ebb nodes; default: drained by ebb drain)", valueHint: "TEXT" },
            owner: { type: "boolean", description: "Its owner wants it back: its host state is owner until ebb resume, and the scheduler moves its elastic jobs off when the gain pays (ebb plans)" },
          } as const)
        : {}),
      ...controllerArgs,
    },
    run: ({ args }) =>
      guard(action, async () => {
        if (args.node.length === 0) throw new UsageError(`give a node name, e.g. \`ebb ${action} node01\``);
        const { reason, owner } = args as { reason?: string; owner?: boolean };
        if (reason !== undefined && reason.trim() === "") throw new UsageError("--reason: give some text, or leave the flag out");
        const c = client(args);
        let failed = 0;
        for (const node of args.node) {
          try {
            await c.drain(node, { resume: action === "resume", reason, owner });
            out(`${node} ${action === "drain" ? (owner ? "drained for its owner" : "drained") : "resumed"}\n`);
          } catch (e) {
            if (!(e instanceof ApiClientError) || e.status === 0) throw e;
            err(`ebb ${action}: ${node}: ${e.message}\n`);
            failed++;
          }
        }
        return failed > 0 ? 1 : 0;
      }),
  });
}
