/** Flags and helpers shared by the daemon commands (controller, agent, up). */
import { defineArgs } from "./args.ts";
import { availableParallelism, hostname, totalmem } from "node:os";
import { parseHostPort, type HostPort } from "../util/addr.ts";
import { durationFlag, intFlag, UsageError } from "./common.ts";

export function listenFlag(value: string, flag = "--listen"): HostPort {
  const hp = parseHostPort(value);
  if ("error" in hp) throw new UsageError(`${flag}: ${hp.error}`);
  return hp;
}

export const controllerTuning = defineArgs({
  heartbeat: { type: "string", description: "Agent heartbeat interval in seconds; 3 missed make a node DOWN (default 2)", valueHint: "SECONDS" },
  "default-time": { type: "string", description: "Time limit of jobs that give none (default 1:00:00)", valueHint: "TIME" },
  "kill-wait": { type: "string", description: "Seconds between SIGTERM and SIGKILL when a job is cancelled or times out (default 5)", valueHint: "SECONDS" },
});

export function tuning(a: { heartbeat?: string; "default-time"?: string; "kill-wait"?: string }) {
  const hb = a.heartbeat === undefined ? undefined : Number(a.heartbeat);
  if (hb !== undefined && !(hb >= 0.05 && hb <= 3600)) throw new UsageError(`--heartbeat ${a.heartbeat}: expected seconds between 0.05 and 3600`);
  return {
    heartbeatMs: hb === undefined ? undefined : Math.round(hb * 1000),
    defaultTimeLimit: durationFlag(a["default-time"], "--default-time"),
    killWaitMs: a["kill-wait"] === undefined ? undefined : (intFlag(a["kill-wait"], "--kill-wait", { min: 0 }) ?? 5) * 1000,
  };
}

export function localCpus(): number {
  return availableParallelism();
}

export function localMemoryMb(): number {
  return Math.floor(totalmem() / (1 << 20));
}

export function shortHostname(): string {
  return hostname().split(".")[0] || "node";
}

/** Resolves when the process gets SIGINT or SIGTERM. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
}
