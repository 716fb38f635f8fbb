/**
 * The live timeline behind GET /v1/stream, shared by every open stream: while one is open, a
 * cheap mark of the cluster is compared with the last every FEED_CHECK_MS; when it moved, ONE
 * delta is computed — the jobs whose timeline entry changed since the previous one — serialized
 * once, and sent to every stream. Deltas go at most every FEED_GAP_MS: a busy cluster's changes
 * of that time travel in one message (the page draws one frame for them), and a change still
 * shows within 2 s. A new stream gets the whole timeline of its window first (shared too between
 * streams that open while the mark stays), then the deltas. With no stream open it does nothing.
 *
 * A delta looks only at what can have changed: the active jobs (in memory) and the jobs that
 * ended since the previous delta (told by the controller as they end: their final rows are in
 * memory, nothing is read back); each entry is compared with the one last sent, so a busy cluster
 * with 1,000 finished jobs in the window costs what its few changing jobs cost, not what the
 * window holds.
 */
import type { TimelineDelta } from "../../api/schemas.ts";
import { allocationsByJob, pendingEntry, timeline, timelineJob, timelineMark, timelineNodes } from "./timeline.ts";
import type { JobRow } from "../../store/jobs.ts";
import type { JobRuntime } from "./state.ts";
import type { ViewContext } from "./views.ts";

const iso = (t: number) => new Date(t).toISOString();

/** How often the mark is compared (ms) while no delta is held back by FEED_GAP_MS. */
export const FEED_CHECK_MS = 500;
/**
 * Deltas go at least this far apart (ms). A change waits at most this long (the checks fall on
 * the last delta's grid), so it is drawn within 2 s; a page costs its browser a frame per delta,
 * and a busy cluster changes at every check.
 */
export const FEED_GAP_MS = 1500;

/** A whole timeline is reused this long at most, even if the mark stayed (a write the mark missed is seen then). */
const SNAPSHOT_KEPT_MS = 30_000;

export type FeedEvent = "timeline" | "delta";
type Send = (event: FeedEvent, json: string) => void;

interface Sent {
  kind: "job" | "pending";
  json: string;
  /** What the entry was made from, cheaply (see `keyOf`): the same key, the same entry. */
  key: string | undefined;
}

export class TimelineFeed {
  private readonly subs = new Set<Send>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private mark = "";
  /** When the last delta was made (ms). */
  private lastDelta = 0;
  /** Jobs ended since the last delta, as they ended (their final rows). */
  private endedRows = new Map<number, JobRow>();
  /** The entry last sent of every job that may still change (active, or ended lately). */
  private sent = new Map<number, Sent>();
  private snapshot: { mark: string; windowSec: number; at: number; json: string } | undefined;

  constructor(
    private readonly ctx: ViewContext,
    private readonly commits: () => number,
    private readonly checkMs = FEED_CHECK_MS,
    private readonly gapMs = FEED_GAP_MS,
  ) {}

  /** The controller ended a job (its row is final): the next delta sends it. Nothing is kept while no stream is open. */
  ended(job: JobRuntime): void {
    if (this.subs.size > 0) this.endedRows.set(job.row.id, job.row);
  }

  /** Sends the window's timeline now, then the deltas; returns the unsubscribe. */
  subscribe(windowSec: number, send: Send): () => void {
    if (this.subs.size === 0) {
      // Prime what was sent, so that the first delta holds only what changed from here on.
      this.sent.clear();
      this.endedRows.clear();
      this.lastDelta = Date.now();
      this.delta(this.lastDelta);
      this.mark = this.currentMark();
      this.timer = setInterval(() => this.tick(), this.checkMs);
    }
    this.subs.add(send);
    send("timeline", this.whole(windowSec));
    return () => {
      this.subs.delete(send);
      if (this.subs.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.sent.clear();
        this.endedRows.clear();
      }
    };
  }

  /** Ends every stream's deltas (the controller stops). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.subs.clear();
    this.sent.clear();
    this.endedRows.clear();
  }

  get streams(): number {
    return this.subs.size;
  }

  private currentMark(): string {
    return timelineMark(this.ctx, this.commits());
  }

  /**
   * The window's whole timeline. Its jobs and pending lists are kept while the mark stays, up to
   * SNAPSHOT_KEPT_MS (a quiet cluster's reloads cost no SQLite reads); the clock and the nodes are
   * always fresh. Jobs that
   * ended before the window since are dropped by the page.
   */
  private whole(windowSec: number): string {
    const mark = this.currentMark();
    const now = Date.now();
    if (this.snapshot?.mark !== mark || this.snapshot.windowSec !== windowSec || now - this.snapshot.at > SNAPSHOT_KEPT_MS) {
      const t = timeline(this.ctx, windowSec * 1000, now);
      this.snapshot = { mark, windowSec, at: now, json: `"jobs":${JSON.stringify(t.jobs)},"pending":${JSON.stringify(t.pending)}` };
    }
    return `{"now":"${iso(now)}","since":"${iso(now - windowSec * 1000)}","nodes":${JSON.stringify(timelineNodes(this.ctx, now))},${this.snapshot.json}}`;
  }

  private tick(): void {
    try {
      const now = Date.now();
      // Within the gap since the last delta: wait (half a check of slack for a late timer).
      if (now - this.lastDelta < this.gapMs - this.checkMs / 2) return;
      const mark = this.currentMark();
      if (mark === this.mark) return;
      const json = JSON.stringify(this.delta(now));
      this.mark = mark;
      this.lastDelta = now;
      for (const send of [...this.subs]) send("delta", json);
    } catch {
      // The store is closing (the controller stops); the next tick tries again if it is not.
    }
  }

  /** What changed since the entries last sent; records the new ones as sent. */
  delta(now: number): TimelineDelta {
    const { state } = this.ctx;
    const d: TimelineDelta = { now: iso(now), nodes: timelineNodes(this.ctx, now), jobs: [], pending: [], removed: [] };
    const seen = new Set<number>();
    // Unchanged since it was last sent: its key is the same (nothing is read or serialized for it).
    const same = (id: number, key: string | undefined) => {
      const yes = key !== undefined && this.sent.get(id)?.key === key;
      if (yes) seen.add(id);
      return yes;
    };
    const changed = (id: number, kind: Sent["kind"], entry: object, key: string | undefined) => {
      seen.add(id);
      const json = JSON.stringify(entry);
      const last = this.sent.get(id);
      this.sent.set(id, { kind, json, key });
      return last?.json !== json;
    };
    const holding: number[] = [];
    for (const j of state.jobs.values()) {
      if (j.row.state === "PENDING") {
        const key = pendingKey(j);
        if (same(j.row.id, key)) continue;
        const p = pendingEntry(j.row, j);
        if (changed(j.row.id, "pending", p, key)) d.pending.push(p);
      } else if (j.row.startTime !== null && !same(j.row.id, jobKey(j.row, j))) holding.push(j.row.id);
    }
    const ended = [...this.endedRows.values()].filter((r) => !state.jobs.has(r.id) && !same(r.id, jobKey(r, undefined)));
    this.endedRows.clear();
    const allocs = allocationsByJob(this.ctx, [...holding, ...ended.filter((r) => r.startTime !== null).map((r) => r.id)]);
    for (const id of holding) {
      const j = state.jobs.get(id)!;
      const e = timelineJob(this.ctx, j.row, j, allocs.get(id) ?? []);
      if (changed(id, "job", e, jobKey(j.row, j))) d.jobs.push(e);
    }
    for (const r of ended) {
      const list = allocs.get(r.id);
      if (!list?.length) continue; // never ran: dropped below if it was listed as pending
      const e = timelineJob(this.ctx, r, undefined, list);
      if (changed(r.id, "job", e, jobKey(r, undefined))) d.jobs.push(e);
    }
    for (const [id, last] of this.sent) {
      if (seen.has(id)) continue;
      this.sent.delete(id);
      if (last.kind === "pending") d.removed.push(id);
    }
    return d;
  }
}

/**
 * What a job's timeline entry is made of, as a string, without reading SQLite: its row's fields
 * that the entry shows and its current nodes (its allocation rows change only with them, or when
 * it ends). Elastic jobs have none (their adaptations move on their own): they are made each time.
 */
function jobKey(row: JobRow, live: JobRuntime | undefined): string | undefined {
  if (row.elastic) return undefined;
  return `${row.state}|${row.name}|${row.user}|${row.startTime}|${row.endTime}|${row.nodes}|${live ? live.nodes.join(",") : "-"}`;
}

/** What a pending job's entry is made of: why it waits, and its fields shown. */
function pendingKey(j: JobRuntime): string {
  return `${j.row.name}|${j.row.nodes}|${j.row.submitTime}|${j.waitReason ?? ""}|${j.blocked ? `${j.blocked.reason}|${j.blocked.detail}` : "-"}`;
}
