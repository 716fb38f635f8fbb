/** What the parts of one replay share: the virtual cluster, its future, its counts, the clock. */
import type { PromiseCheck } from "./check.ts";
import type { SimCluster } from "./cluster.ts";
import type { SimHosts } from "./hosts.ts";
import type { Tally } from "./tally.ts";
import type { Timeline } from "./timeline.ts";

export interface Replay {
  readonly cluster: SimCluster;
  readonly timeline: Timeline;
  readonly tally: Tally;
  /** With `SimOptions.check`: EASY's promise. */
  readonly check?: PromiseCheck;
  /** With `SimOptions.availability`: the nodes' host states and what they cost. */
  readonly hosts?: SimHosts;
  /** What a job's samples read: its true MTCT with seeded noise. */
  readonly noisy: (mtct: number) => number;
  /** The virtual clock (s). */
  now: number;
}
