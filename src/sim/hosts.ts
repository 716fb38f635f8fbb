/**
 * Node availability in the replay (issue 34): each `HostChange` (availability.ts) is an event that
 * sets its node's host state as an agent's rules would (the pass sees it in the snapshot, as live:
 * a node not free takes no new work, jobs leave an overloaded or owner's node when the gain pays,
 * sched/moves.ts), and sets the pace of the jobs on it: a bulk-synchronous job runs at its slowest
 * node's pace, so its remaining work is rescaled at every change (job-run.ts `advance` with its
 * old pace, then its next step at the new one). The pass reads a node's pace from its state's
 * inputs as an agent reports them: `cpu.other` = 1 − the line's speed (moves.ts `hostSpeed`; an
 * owner's node counts as 0 there, whatever the trace's speed).
 *
 * Counts: the moves made (a move's shrink begun), their grows back refused at the shrink's commit,
 * the jobs a move was declined for at least once, node-seconds in each state that is not free, and
 * every node taken for new work while not free (none may be: `checkPlan` refuses it).
 */
import type { HostStateName } from "../domain/host-state.ts";
import type { HostChange } from "./availability.ts";
import { advance } from "./job-run.ts";
import type { Replay } from "./replay.ts";
import type { Timeline } from "./timeline.ts";

/** What a replay with availability reports. */
export interface HostsRun {
  moves: number;
  growBacksRefused: number;
  /** Jobs a move was declined for at least once (rigid, cannot shrink off the node, or the gain did not pay). */
  declined: number;
  /** Node-hours in each state that is not free, up to the last job's end. */
  nodeHours: Record<Exclude<HostStateName, "free">, number>;
  /** Nodes taken for a start or grow while not free (0 unless the re-check is broken). */
  takenNotFree: number;
}

export class SimHosts {
  moves = 0;
  growBacksRefused = 0;
  readonly declined = new Set<number>();
  private readonly seconds = { busy: 0, overloaded: 0, owner: 0 };

  constructor(private readonly changes: readonly HostChange[]) {}

  /** Every change as an event of the timeline (the event's `job` is the change's index). */
  schedule(timeline: Timeline): void {
    for (let i = 0; i < this.changes.length; i++) timeline.hostChange(this.changes[i]!.time, i);
  }

  /** Change `i` at t: the node's state, the pace of the jobs on it; a node that stops taking work voids the head's promise (`--check`). */
  apply(i: number, t: number, x: Replay): void {
    const c = this.changes[i]!;
    const { cluster } = x;
    const node = cluster.nodes[c.node - 1]!;
    this.account(node.host?.state, node.host ? t - node.host.since / 1000 : 0);
    const wasTaking = node.takesWork !== false;
    if (c.state === "free") {
      node.host = undefined;
      node.takesWork = undefined;
      node.speed = undefined;
    } else {
      node.host = { state: c.state, rule: c.rule, inputs: c.state === "owner" ? {} : { "cpu.other": 1 - c.speed }, since: t * 1000 };
      node.takesWork = false;
      node.speed = c.speed;
    }
    cluster.hostChanged(wasTaking, node.takesWork !== false);
    if (wasTaking && node.takesWork === false) x.check?.voidPromise();
    const ids = node.shares ? [...node.shares.keys()] : node.jobId !== undefined ? [node.jobId] : [];
    for (const id of ids) {
      const r = cluster.jobs.get(id);
      if (!r || r.state !== "running") continue;
      const pace = cluster.pace(r.names);
      if (pace === r.speed) continue;
      advance(r, t);
      r.speed = pace;
      if (!r.adapting) x.timeline.nextStep(r, t);
    }
  }

  /** The replay ended at t: the nodes still not free count up to it. */
  finish(t: number, x: Replay): HostsRun {
    for (const n of x.cluster.nodes) if (n.host) this.account(n.host.state, t - n.host.since / 1000);
    const h = (s: number) => s / 3600;
    return { moves: this.moves, growBacksRefused: this.growBacksRefused, declined: this.declined.size, nodeHours: { busy: h(this.seconds.busy), overloaded: h(this.seconds.overloaded), owner: h(this.seconds.owner) }, takenNotFree: x.cluster.takenNotFree };
  }

  private account(state: HostStateName | undefined, seconds: number): void {
    if (state && state !== "free") this.seconds[state] += Math.max(0, seconds);
  }
}
