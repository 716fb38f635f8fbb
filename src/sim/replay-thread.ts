/**
 * One replay thread of `runSeedsOnThreads` (threads.ts): it takes one (seed, policy) request at a
 * time, replays it with `runPolicies`, and sends back the report and, now and then, its progress.
 * The replays share nothing, so each thread's result is the one a single thread would get.
 *
 * The compiled binary carries this file as an entrypoint (see the build script).
 */
import { jitPolicy, NORMAL } from "../util/jit.ts";
import { runPolicies, type SimReport, type SimRequest } from "./run.ts";

/** A request without its progress callback (a function does not cross threads). */
export type ToReplayThread = { id: number; req: Omit<SimRequest, "onProgress"> };
export type FromReplayThread = { t: "progress"; id: number; done: number; events: number } | { t: "done"; id: number; report: SimReport } | { t: "failed"; id: number; message: string };

declare const self: Worker;
const reply = (m: FromReplayThread) => self.postMessage(m);
jitPolicy(NORMAL);

self.onmessage = ({ data: { id, req } }: MessageEvent<ToReplayThread>) => {
  try {
    reply({ t: "done", id, report: runPolicies({ ...req, onProgress: (_p, done, events) => reply({ t: "progress", id, done, events }) }) });
  } catch (e) {
    reply({ t: "failed", id, message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
};
