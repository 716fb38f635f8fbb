/**
 * The agents' thread (src/cli/agent-thread.ts) under JavaScriptCore's sampling profiler (bun:jsc
 * `profile`, a sample every 1 ms; `bun --cpu-prof` does not profile Worker threads): started by
 * _profile-agent-thread.ts in place of it. When the thread has stopped its agents, it writes the
 * samples to EBB_AGENT_PROFILE_DIR/PID.json (the profile's stackTraces: a stack of named frames
 * per sample, each with its tier), then says it has stopped.
 */
import { writeFileSync } from "node:fs";
import { profile } from "bun:jsc";
import "../src/cli/agent-thread.ts";

declare const self: Worker;
const dir = process.env.EBB_AGENT_PROFILE_DIR ?? "/tmp";
const post = self.postMessage.bind(self);
let stopped: (m: unknown) => void;
const done = new Promise<unknown>((resolve) => (stopped = resolve));
self.postMessage = ((m: { t?: string }) => (m?.t === "stopped" ? stopped(m) : post(m))) as typeof self.postMessage;
void profile(() => done, 1000).then(async (p) => {
  writeFileSync(`${dir}/${process.pid}.json`, JSON.stringify(p.stackTraces));
  post(await done);
});
