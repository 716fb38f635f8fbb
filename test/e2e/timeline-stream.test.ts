/**
 * GET /v1/stream against a cluster of real processes: the whole timeline first, then deltas that
 * name only the jobs that changed (a finished job is not sent again when another one runs), the
 * same bytes to every open stream (one delta computed for all), and a pending job that is
 * cancelled before it ran is removed. Every event fits its schema (TimelineView, TimelineDelta).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TimelineDelta, TimelineView } from "../../src/api/schemas.ts";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { type SseEvent, sseEvents } from "../support/sse.ts";

/** Ceiling for an event to come (a change shows within 2 s; this is load headroom). */
const SHOWN = 30_000;

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});


/** An open stream: its events as they come, read in order. */
async function openStream(window = 600) {
  const ctl = new AbortController();
  const res = await fetch(`${c.url}/v1/stream?window=${window}`, { headers: { Authorization: `Bearer ${c.token}` }, signal: ctl.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const stream = sseEvents(res.body!);
  const all: SseEvent[] = [];
  return {
    all,
    /** The next event (skipping keep-alive comments). */
    async next(): Promise<SseEvent> {
      const timer = setTimeout(() => ctl.abort(), SHOWN);
      try {
        const e = await stream.next();
        all.push(e);
        return e;
      } finally {
        clearTimeout(timer);
      }
    },
    /** Deltas until one satisfies `until`; all the deltas read. */
    async deltasUntil(until: (d: TimelineDelta) => boolean): Promise<TimelineDelta[]> {
      const seen: TimelineDelta[] = [];
      for (;;) {
        const e = await this.next();
        expect(e.event).toBe("delta");
        const d = TimelineDelta.parse(JSON.parse(e.data));
        seen.push(d);
        if (until(d)) return seen;
      }
    },
    close: () => ctl.abort(),
  };
}

describe("the timeline stream", () => {
  test("whole timeline first, then deltas of what changed only, the same for every stream", async () => {
    const a = await openStream();
    const b = await openStream(3600);
    for (const s of [a, b]) {
      const first = await s.next();
      expect(first.event).toBe("timeline");
      const t = TimelineView.parse(JSON.parse(first.data));
      expect(t.nodes.map((n) => n.name)).toEqual(["node01", "node02"]);
    }

    // A job runs to its end: the deltas bring it, finally COMPLETED with its stretch closed.
    const one = await c.submit({ argv: ["true"], output: "/dev/null" });
    const ended = (d: TimelineDelta, id: number) => d.jobs.some((j) => j.id === id && j.state === "COMPLETED" && j.allocations.every((x) => x.until !== null));
    await a.deltasUntil((d) => ended(d, one));
    await b.deltasUntil((d) => ended(d, one));

    // A second job: no delta names the first one again.
    const two = await c.submit({ argv: ["true"], output: "/dev/null" });
    const seen = await a.deltasUntil((d) => ended(d, two));
    expect(seen.flatMap((d) => d.jobs.map((j) => j.id))).not.toContain(one);
    expect(seen.flatMap((d) => d.jobs.map((j) => j.id))).toContain(two);
    // The other stream got the same deltas, byte for byte: one delta made for both.
    await b.deltasUntil((d) => ended(d, two));
    const deltas = (s: typeof a) => s.all.filter((e) => e.event === "delta").map((e) => e.data);
    expect(deltas(a).length).toBeGreaterThan(1);
    expect(deltas(b)).toEqual(deltas(a));

    // A held job is listed as pending, with its reason; cancelled before it ran, it is removed.
    const held = await c.submit({ argv: ["true"], output: "/dev/null", hold: true });
    const listed = await a.deltasUntil((d) => d.pending.some((p) => p.id === held));
    expect(listed.at(-1)!.pending.find((p) => p.id === held)!.reason).toBe("JobHeldUser");
    expect((await c.api("DELETE", `/v1/jobs/${held}`)).status).toBe(200);
    const gone = await a.deltasUntil((d) => d.removed.includes(held));
    expect(gone.flatMap((d) => d.jobs.map((j) => j.id))).not.toContain(held);

    a.close();
    b.close();
  }, 120_000);

  test("a stream opened later starts from the whole timeline, the finished jobs in it", async () => {
    const s = await openStream();
    const first = await s.next();
    expect(first.event).toBe("timeline");
    const t = TimelineView.parse(JSON.parse(first.data));
    expect(t.jobs.filter((j) => j.state === "COMPLETED").length).toBe(2);
    expect(t.pending).toEqual([]);
    s.close();
  });
});
