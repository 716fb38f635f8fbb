/**
 * Replays on threads: every (seed, policy) pair of a request is one replay, and up to `threads`
 * of them run at once, each on a worker thread (replay-thread.ts) that the pool keeps for its
 * next replay (a thread's JIT-compiled code serves every replay it runs; a new thread costs ~0.13
 * s of CPU to load the code and compiles it again). A replay is deterministic and shares nothing
 * with the others, so the report is the one `runSeeds` gives, field for field (but `wallMs`, each
 * replay's own time on its thread). With one thread, or one replay, it is `runSeeds` on this
 * thread. Progress is the whole request's: the fraction of its replays' jobs done and their
 * events so far, under the label "N replays on K threads".
 */
import { isCompiled } from "../util/self.ts";
import { gatherSeeds, runSeeds, type SeedsReport, type SeedsRequest, type SimReport } from "./run.ts";
import type { FromReplayThread, ToReplayThread } from "./replay-thread.ts";

export class ReplayThreads {
  private readonly idle: Worker[] = [];
  private readonly all: Worker[] = [];
  private readonly threads: number;

  constructor(threads: number) {
    this.threads = Math.max(1, Math.floor(threads));
  }

  async runSeeds(req: SeedsRequest): Promise<SeedsReport> {
    if (req.seeds.length === 0) throw new RangeError("seeds: at least one");
    const units = req.seeds.flatMap((seed) => req.policies.map((policy) => ({ seed, policy })));
    const n = Math.min(this.threads, units.length);
    if (n === 1) return runSeeds(req);
    const { onProgress, ...plain } = req;
    const label = `${units.length} replays on ${n} threads`;
    const done = units.map(() => 0);
    const events = units.map(() => 0);
    const reports: SimReport[] = [];
    const progress = (id: number, d: number, e: number) => {
      done[id] = d;
      events[id] = e;
      onProgress?.(label, done.reduce((a, x) => a + x, 0) / units.length, events.reduce((a, x) => a + x, 0));
    };
    let next = 0;
    const drive = (w: Worker) =>
      new Promise<void>((resolve, reject) => {
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
    const mine = Array.from({ length: n }, () => this.idle.pop() ?? this.spawn());
    try {
      await Promise.all(mine.map(drive));
    } catch (e) {
      // A thread may still be replaying: the threads of a failed request are not reused.
      for (const w of mine) this.drop(w);
      throw e;
    }
    this.idle.push(...mine);
    const per = req.seeds.map((_, s) => {
      const of = reports.slice(s * req.policies.length, (s + 1) * req.policies.length);
      return { results: of.map((r) => r.results[0]!), skipped: of[0]!.skipped, malleableJobs: of[0]!.malleableJobs };
    });
    return gatherSeeds(req, per);
  }

  /** Ends every thread. */
  close(): void {
    for (const w of [...this.all]) this.drop(w);
  }

  private spawn(): Worker {
    const w = new Worker(isCompiled() ? "./sim/replay-thread.ts" : new URL("./replay-thread.ts", import.meta.url).href);
    this.all.push(w);
    return w;
  }

  private drop(w: Worker): void {
    w.terminate();
    this.all.splice(this.all.indexOf(w), 1);
    const i = this.idle.indexOf(w);
    if (i >= 0) this.idle.splice(i, 1);
  }
}

/** One request on `threads` threads made for it. */
export async function runSeedsOnThreads(req: SeedsRequest, threads: number): Promise<SeedsReport> {
  const pool = new ReplayThreads(threads);
  try {
    return await pool.runSeeds(req);
  } finally {
    pool.close();
  }
}
