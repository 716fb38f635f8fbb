/** The simulator's event queue: by time; same-time events pop in the order they were pushed. */
import { Heap } from "../util/heap.ts";

export interface Event {
  time: number;
  seq: number;
  kind: "arrive" | "end" | "commit" | "point" | "limit" | "host";
  /** The job; for a `host` event, the index of its availability change (hosts.ts). */
  job: number;
  version: number;
}

export class EventQueue {
  private readonly heap = new Heap<Event>((a, b) => a.time < b.time || (a.time === b.time && a.seq < b.seq));
  private seq = 0;

  get size(): number {
    return this.heap.size;
  }

  push(e: Omit<Event, "seq">): void {
    this.heap.push({ time: e.time, seq: this.seq++, kind: e.kind, job: e.job, version: e.version });
  }

  peek(): Event | undefined {
    return this.heap.peek();
  }

  pop(): Event | undefined {
    return this.heap.pop();
  }
}
