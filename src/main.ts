#!/usr/bin/env -S bun --no-env-file
/** ebb: one executable, one role per subcommand. */
import { defineCommand, runMain } from "citty";
import { showUsage } from "./cli/usage.ts";
import { startupPolicy } from "./util/jit.ts";
import { VERSION } from "./util/version.ts";

const main = defineCommand({
  meta: { name: "ebb", version: VERSION, description: "A resource manager for elastic parallel jobs" },
  subCommands: {
    up: () => import("./cli/up.ts").then((m) => m.default),
    controller: () => import("./cli/controller.ts").then((m) => m.default),
    agent: () => import("./cli/agent.ts").then((m) => m.default),
    run: () => import("./cli/run.ts").then((m) => m.default),
    submit: () => import("./cli/submit.ts").then((m) => m.default),
    queue: () => import("./cli/queue.ts").then((m) => m.default),
    show: () => import("./cli/show.ts").then((m) => m.default),
    cancel: () => import("./cli/cancel.ts").then((m) => m.default),
    resize: () => import("./cli/resize.ts").then((m) => m.default),
    nodes: () => import("./cli/nodes.ts").then((m) => m.default),
    sim: () => import("./cli/sim.ts").then((m) => m.default),
  },
});

startupPolicy();
void runMain(main, { showUsage });
