/**
 * A host's state as its agent's rules judge it from the node's own measurements (issue 34; HPCM's
 * free/busy/overloaded states, plus `owner`):
 * - free: accepts new work;
 * - busy: keeps what it runs, takes nothing new;
 * - overloaded: its jobs should leave (the scheduler moves those that can, when the gain pays);
 * - owner: the node's owner wants it back (a rule, or `ebb drain --owner`): jobs leave as from an
 *   overloaded node, and the node takes nothing new until the state clears.
 */
export const HOST_STATES = ["free", "busy", "overloaded", "owner"] as const;
export type HostStateName = (typeof HOST_STATES)[number];

export interface HostState {
  state: HostStateName;
  /** The rule that set it ("cpu.other > 0.5 for 10 s", or "ebb drain --owner"); "" when free by default. */
  rule: string;
  /** The rule's inputs as last evaluated (smoothed), by name: `cpu.other`, `load1`, `psi.mem`, `net.bytes`, `users`... */
  inputs: Readonly<Record<string, number>>;
  /** Since when (epoch ms) the node has been in this state. */
  since: number;
}

/** A node takes new work (starts, grows, moves onto it) only when free. */
export function takesNewWork(h: HostState | undefined): boolean {
  return h === undefined || h.state === "free";
}

/** Its jobs should leave it. */
export function shouldVacate(h: HostState | undefined): boolean {
  return h !== undefined && (h.state === "overloaded" || h.state === "owner");
}
