/**
 * Shared-memory files left by processes that died without cleaning up: an agent killed with
 * SIGKILL leaves its steps' adaptation segments and CFG directories, a rank killed unmapped
 * leaves its ring, a rank that crashed or exited non-zero leaves its comm socket file. Each name ends with (or, for rings, starts with) the pid of its owner; the
 * agent removes, when it starts, those whose owners are all gone, and its own node's step files
 * that carry its own pid: an earlier life's, whose pid a restart may get again (a container's
 * agent is often pid 1), since a starting agent has no step yet.
 */
import { readdirSync } from "node:fs";
import { ownerBeneath, removeBeneath } from "./user-files.ts";
import { agentIsRoot, asUser } from "../identity.ts";
import { pidAlive } from "../../util/pid.ts";

/** A part of a step's shm names that nobody can guess ahead of the agent. */
export const randomTag = (): string => crypto.getRandomValues(new Uint32Array(2)).reduce((a, n) => a + n.toString(36), "");

/** Owner pids of an ebb name in the shm directory, or undefined if the name is not ours. */
export function shmOwners(name: string): number[] | undefined {
  const step = /^ebb-(?:adapt|cfg)-.+-(\d+)$/.exec(name);
  if (step) return [Number(step[1])];
  // ebbc-<writer id>-<reader id>; a card id is "<pid base 36>.<random>".
  const ring = /^ebbc-([0-9a-z]+)\.[0-9a-z]+-([0-9a-z]+)\.[0-9a-z]+$/.exec(name);
  if (ring) return [parseInt(ring[1]!, 36), parseInt(ring[2]!, 36)];
  // ebbc-<id>.sock: a rank's Unix socket, left by a crash or a non-zero exit (see src/comm/README.md).
  const sock = /^ebbc-([0-9a-z]+)\.[0-9a-z]+\.sock$/.exec(name);
  if (sock) return [parseInt(sock[1]!, 36)];
  return undefined;
}


/** Whether `name` is a step file (adaptation segment, CFG directory) of node `node` owned by pid `pid`. */
function stepFileOf(name: string, self: { node: string; pid: number }): boolean {
  // ebb-<kind>-<node>-<job>.<step>.<random>-<pid> (names made before the random part have none).
  const m = /^ebb-(?:adapt|cfg)-(.+)-\d+\.\d+(?:\.[0-9a-z]+)?-(\d+)$/.exec(name);
  return m !== null && m[1] === self.node && Number(m[2]) === self.pid;
}

/** Removes what dead processes left in `dir`, and what an earlier life of agent `self` left there; returns the names removed. */
export function sweepStaleShm(dir: string, self?: { node: string; pid: number }): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owners = shmOwners(name);
    if (!owners) continue;
    if (!(self && stepFileOf(name, self)) && owners.some((pid) => !Number.isSafeInteger(pid) || pid <= 0 || pidAlive(pid))) continue;
    try {
      // With its owner's rights: a user's directory cannot lead a root rm anywhere else. Never
      // entering a mount of hers on the name (user-files.ts): such a name is left.
      const st = ownerBeneath(dir, name);
      asUser(!agentIsRoot() || st.uid === 0 ? undefined : { user: String(st.uid), uid: st.uid, gid: st.gid, groups: [], home: "/" }, () => removeBeneath(dir, name));
      removed.push(name);
    } catch {}
  }
  return removed;
}
