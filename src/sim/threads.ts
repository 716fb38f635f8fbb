/**
 * `runSeeds` spread over threads: every (seed, policy) pair is one replay, and up to `threads`
 * replays run at once, each on a thread of its own (replay-thread.ts). A replay is deterministic
 * and shares nothing with the others, so the report is the one `runSeeds` gives, field for field
 * (but `wallMs`, each replay's own time on its thread). With one thread, or one replay, it is
 * `runSeeds` on this thread. Progress is the whole set's: the fraction of its replays' jobs done and
 * their events so far, under the label "N replays on K threads".
 */
import { isCompiled } from "../util/self.ts";
import { gatherSeeds, runSeeds, type SeedsReport, type SeedsRequest, type SimReport } from "./run.ts";
import type { FromReplayThread, ToReplayThread } from "./replay-thread.ts";

export async function runSeedsOnThreads(req: SeedsRequest, threads: number): Promise<SeedsReport> {
  if (req.seeds.length === 0) throw new RangeError("seeds: at least one");
  const units = req.seeds.flatMap((seed) => req.policies.map((policy) => ({ seed, policy })));
  const n = Math.min(Math.max(1, Math.floor(threads)), units.length);
  if (n === 1) return runSeeds(req);
  const { onProgress, ...plain } = req;
  const label = `${units.length} replays on ${n} threads`;
  const done = units.map(() => 0);
  const events = units.map(() => 0);
  const reports: (SimReport | undefined)[] = units.map(() => undefined);
  const progress = (id: number, d: number, e: number) => {
    done[id] = d;
    events[id] = e;
    onProgress?.(label, done.reduce((a, x) => a + x, 0) / units.length, events.reduce((a, x) => a + x, 0));
  };
  let next = 0;
  const workers: Worker[] = [];
  try {
    await Promise.all(
      Array.from({ length: n }, () => {
        const w = new Worker(isCompiled() ? "./sim/replay-thread.ts" : new URL("./replay-thread.ts", import.meta.url).href);
        workers.push(w);
        return new Promise<void>((resolve, reject) => {
          const give = () => {
            if (next === units.length) return resolve();
            const id = next++;
            const { seed, policy } = units[id]!;
            w.postMessage({ id, req: { ...plain, workload: { ...plain.workload, seed }, policies: [policy] } } satisfies ToReplayThread);
          };
          w.onmessage = ({ data: m }: MessageEvent<FromReplayThread>) => {
            if (m.t === "progress") return progress(m.id, m.done, m.events);
            if (m.t === "failed") return reject(new Error(`replay of ${units[m.id]!.policy}, seed ${units[m.id]!.seed}: ${m.message}`));
            reports[m.id] = m.report;
            progress(m.id, 1, m.report.results[0]!.run.events);
            give();
          };
          w.onerror = (e) => reject(new Error(`a replay thread failed: ${e.message}`));
          give();
        });
      }),
    );
  } finally {
    for (const w of workers) w.terminate();
  }
  const per = req.seeds.map((_, s) => {
    const mine = reports.slice(s * req.policies.length, (s + 1) * req.policies.length) as SimReport[];
    return { results: mine.map((r) => r.results[0]!), skipped: mine[0]!.skipped, malleableJobs: mine[0]!.malleableJobs };
  });
  return gatherSeeds(req, per);
}
