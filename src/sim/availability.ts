/**
 * Node availability beside a workload (issue 34): when each node's host state changes, read from a
 * small text format or generated from a seed. README.md, "Availability", describes both.
 *
 *   # TIME NODE STATE [SPEED]
 *   3600   5     owner          # n5's owner is back an hour in
 *   5400   5     free
 *   7200   3-7   overloaded 0.4 # n3..n7: a job's ranks there keep 40 % of their pace
 *
 * TIME: seconds from the workload's start; NODE: a node number (n1..nN), `nA`, or a range `A-B`;
 * STATE: free, busy, overloaded or owner; SPEED (0..1): what a job's ranks keep of their pace on the
 * node while it is in that state (default `DEFAULT_SPEED`; a free node runs at full pace).
 */
import { HOST_STATES, type HostStateName } from "../domain/host-state.ts";
import { stream } from "./random.ts";

export interface HostChange {
  /** Seconds from the workload's start. */
  time: number;
  /** Node number, 1-based (n1..nN). */
  node: number;
  state: HostStateName;
  /** What a job keeps of its pace on the node (0..1). */
  speed: number;
  /** Where it came from (the rule the pass sees): "availability line 3", "generated: owner back". */
  rule: string;
}

/** A job's pace on a node in each state unless the line says otherwise. */
export const DEFAULT_SPEED: Readonly<Record<HostStateName, number>> = { free: 1, busy: 1, overloaded: 0.5, owner: 0.1 };

/** At most this many changes (file lines expanded by their ranges, or generated): bounds the replay's memory. */
export const MAX_CHANGES = 1_000_000;

/** The changes of an availability file for a cluster of `nodes` nodes, by time (a file's order among equal times); throws naming the line and field. */
export function parseAvailability(text: string, nodes: number): HostChange[] {
  const out: HostChange[] = [];
  const seen = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const no = i + 1;
    const body = lines[i]!.replace(/#.*/, "").trim();
    if (body === "") continue;
    const fail = (field: string, value: string, why: string): never => {
      throw new RangeError(`line ${no}, ${field} "${value}": ${why}`);
    };
    const f = body.split(/\s+/);
    if (f.length < 3 || f.length > 4) throw new RangeError(`line ${no}: expected TIME NODE STATE [SPEED], got ${f.length} field${f.length === 1 ? "" : "s"}`);
    const [timeText, nodeText, stateText, speedText] = f as [string, string, string, string | undefined];
    const time = Number(timeText);
    if (!/^[0-9.eE+]+$/.test(timeText) || !Number.isFinite(time) || time < 0) fail("TIME", timeText, "expected seconds from the workload's start, a number >= 0");
    const state = stateText as HostStateName;
    if (!HOST_STATES.includes(state)) fail("STATE", stateText, `expected one of ${HOST_STATES.join(", ")}`);
    let speed = DEFAULT_SPEED[state];
    if (speedText !== undefined) {
      if (state === "free") fail("SPEED", speedText, "a free node runs jobs at full pace; give a speed only for busy, overloaded or owner");
      speed = Number(speedText);
      if (!/^[0-9.eE+-]+$/.test(speedText) || !(speed >= 0 && speed <= 1)) fail("SPEED", speedText, "expected the share of its pace a job keeps on the node, 0 to 1");
    }
    const range = /^n?(\d+)(?:-n?(\d+))?$/.exec(nodeText);
    if (!range) fail("NODE", nodeText, "expected a node number (1..N, or nK) or a range A-B");
    const a = Number(range![1]);
    const b = range![2] === undefined ? a : Number(range![2]);
    if (a < 1 || b > nodes) fail("NODE", nodeText, `the cluster has nodes 1..${nodes} (n1..n${nodes})`);
    if (b < a) fail("NODE", nodeText, "the range ends before it starts");
    for (let n = a; n <= b; n++) {
      const key = `${n}@${time}`;
      const before = seen.get(key);
      if (before !== undefined) fail("NODE", nodeText, `node ${n} changes twice at ${time} s (also line ${before})`);
      seen.set(key, no);
      out.push({ time, node: n, state, speed, rule: `availability line ${no}` });
      if (out.length > MAX_CHANGES) throw new RangeError(`line ${no}: more than ${MAX_CHANGES.toLocaleString("en-US")} changes (ranges count each node); split the replay`);
    }
  }
  return out.sort((x, y) => x.time - y.time);
}

export interface AvailabilityGen {
  nodes: number;
  seed: number;
  /** Fraction of the nodes that are someone's workstation (0..1). */
  workstations: number;
  /** Mean seconds between an owner leaving and coming back (exponential). */
  ownerEvery: number;
  /** Mean seconds an owner stays (exponential). */
  ownerStay: number;
  /** A job's pace on a node while its owner is there. */
  ownerSpeed: number;
  /** Owners come back only before this (s): afterwards each node clears when its owner's stay ends, so every job can finish. */
  until: number;
}

export const GEN_DEFAULTS = { workstations: 0.25, ownerEvery: 8 * 3600, ownerStay: 3600, ownerSpeed: DEFAULT_SPEED.owner } as const;

/**
 * A seeded availability: each node is a workstation with probability `workstations` (its own draw,
 * so a larger fraction keeps the smaller one's nodes); a workstation's owner is away for an
 * exponential time of mean `ownerEvery` and stays for one of mean `ownerStay`, starting in the
 * stationary state (present with probability stay / (every + stay)). The other nodes stay free.
 */
export function generateAvailability(g: AvailabilityGen): HostChange[] {
  if (!(g.ownerEvery > 0 && g.ownerStay > 0)) throw new RangeError(`an owner's absence and stay must be above 0 s (got ${g.ownerEvery} and ${g.ownerStay})`);
  const out: HostChange[] = [];
  const pick = stream(g.seed, "workstations");
  const exp = (r: { next(): number }, mean: number) => -mean * Math.log(1 - r.next());
  for (let n = 1; n <= g.nodes; n++) {
    if (!(pick.next() < g.workstations)) continue;
    const r = stream(g.seed, `owner n${n}`);
    const owner = (time: number, rule: string) => out.push({ time, node: n, state: "owner", speed: g.ownerSpeed, rule });
    const gone = (time: number) => out.push({ time, node: n, state: "free", speed: 1, rule: "generated: owner gone" });
    let t = 0;
    if (r.next() < g.ownerStay / (g.ownerEvery + g.ownerStay)) {
      owner(0, "generated: owner at work");
      gone((t = exp(r, g.ownerStay)));
    }
    for (;;) {
      t += exp(r, g.ownerEvery);
      if (t >= g.until) break;
      owner(t, "generated: owner back");
      gone((t += exp(r, g.ownerStay)));
      if (out.length > MAX_CHANGES) throw new RangeError(`the generated availability has more than ${MAX_CHANGES.toLocaleString("en-US")} changes: give owners longer absences (--owner-every) or fewer workstations`);
    }
  }
  return out.sort((x, y) => x.time - y.time || x.node - y.node);
}
