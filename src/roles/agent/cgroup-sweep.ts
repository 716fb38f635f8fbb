/**
 * Agent cgroups that outlived their agent: an agent's sentinel removes them when it dies, but not
 * when the sentinel dies with it (a whole service or session killed at once, the OOM killer, a
 * kill of every process of a cgroup) or gives up on processes slow to die. A starting agent
 * sweeps, in each hierarchy where it makes its own (`ebb-agent-NAME-PID`, beside it):
 *
 * - its own earlier lives (its name, a PID that is not a live ebb agent, or its own PID from before
 *   this process made any): what still runs in them is killed, then they are removed;
 * - other agents' that are gone (a PID that is not a live ebb agent): removed if empty, else left;
 *
 * bottom-up, directories only, never through a link, only entries owned by the agent's own uid
 * (root's, where jobs can create nothing: root-attacks.test.ts). What cannot be removed is left and
 * logged once. A PID is a live ebb agent when /proc/PID/cmdline runs ebb's `agent` or `up` (or
 * `bun test`, whose files start agents in-process): PIDs are reused, so existence is not enough.
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { logger } from "../../util/log.ts";
import { pidAlive } from "../../util/pid.ts";
import { killTree, populated, removeTree } from "./cgroup-tree.ts";

const log = logger("agent");

const LEAF = /^ebb-agent-(.+)-(\d+)$/;
/** How long a sweep waits for what it killed to leave its cgroups. */
const KILL_WAIT_MS = 5_000;

export type Stale = "own-life" | "gone" | "keep";

/** Whether a command line (NUL-separated argv) may host ebb agents: `ebb agent`, `ebb up`, or `bun test`. */
export function hostsAgents(argv: readonly string[]): boolean {
  if (argv.includes("agent") || argv.includes("up")) return true;
  return /^bun(\.exe)?$/.test(basename(argv[0] ?? "")) && argv[1] === "test";
}

/**
 * What to do with the entry `entry` of an agent's parent cgroup, for agent `self` (its leaf
 * name's NAME part and this process's pid). `live(pid)`: whether pid is a live ebb agent. An
 * entry of this very pid counts as an earlier life only if it was there before this process made
 * any (the caller lists the parent once, first).
 */
export function classify(entry: string, self: { name: string; pid: number }, live: (pid: number) => boolean): Stale {
  const m = LEAF.exec(entry);
  if (!m) return "keep";
  const [name, pid] = [m[1]!, Number(m[2])];
  if (!Number.isSafeInteger(pid) || pid <= 0) return "keep";
  if (pid === self.pid) return name === self.name ? "own-life" : "keep";
  if (live(pid)) return "keep";
  return name === self.name ? "own-life" : "gone";
}

/** Each pid's answer, read once: `ebb up`'s agents each sweep the same listing (1,024 of them, as many leftovers after a kill). */
const liveAnswers = new Map<number, boolean>();

function liveAgent(pid: number): boolean {
  if (pid === process.pid) return true;
  let live = liveAnswers.get(pid);
  if (live === undefined) {
    try {
      live = pidAlive(pid) && hostsAgents(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0"));
    } catch {
      live = false;
    }
    liveAnswers.set(pid, live);
  }
  return live;
}

/** Each parent's agent entries as this process first saw them (before any agent of it made its own). */
const firstListing = new Map<string, string[]>();
/** Parents whose other agents' leftovers this process has already swept (once: `ebb up` starts many agents). */
const sweptGone = new Set<string>();

function listing(parent: string): string[] {
  let names = firstListing.get(parent);
  if (!names) {
    try {
      names = readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory() && LEAF.test(e.name)).map((e) => e.name);
    } catch {
      names = [];
    }
    firstListing.set(parent, names);
  }
  return names;
}

/** Whether `path` is a directory of ours (made by this uid), not a link. */
function ours(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === process.geteuid!();
  } catch {
    return false;
  }
}

/**
 * Sweeps the agent cgroups under each of `parents` (the agent's own cgroup in each hierarchy it
 * uses) for agent `name` (its leaf's NAME part) before it makes its own; logs what it did and, once,
 * what it left.
 */
export function sweepStaleCgroups(parents: readonly string[], name: string): void {
  const self = { name, pid: process.pid };
  const todo: { path: string; kind: Stale }[] = [];
  for (const parent of parents) {
    const others = !sweptGone.has(parent);
    sweptGone.add(parent);
    for (const entry of listing(parent)) {
      const kind = classify(entry, self, liveAgent);
      if (kind === "own-life" || (kind === "gone" && others)) todo.push({ path: join(parent, entry), kind });
    }
  }
  const mine = todo.filter((t) => t.kind === "own-life" && ours(t.path));
  // The same processes are in each hierarchy's cgroups: counted once.
  const killed = new Set(mine.flatMap((t) => killTree(t.path))).size;
  if (killed > 0) {
    const deadline = Date.now() + KILL_WAIT_MS;
    while (Date.now() < deadline && mine.some((t) => populated(t.path))) Bun.sleepSync(20);
  }
  const left = todo.filter((t) => existsSync(t.path) && (!ours(t.path) || !removeTree(t.path))).map((t) => t.path);
  const removed = todo.length - left.length;
  if (killed > 0) log.warn(`killed ${killed} process(es) left in the cgroups of this agent's earlier life`);
  if (removed > 0) log.info(`removed ${removed} cgroup director(ies) of agents that are gone`);
  if (left.length > 0) log.warn(`left ${left.length} cgroup director(ies) of agents that are gone: they still hold processes not this agent's to kill, or are not its own (${left.join(", ")})`);
}
