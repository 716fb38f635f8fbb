/**
 * `ebb up`'s agents spread over several threads (`--agent-threads`), each an AgentWorker with its
 * own link to the controller: a wide launch's spawns, cgroup work and messages run on as many
 * cores, where one thread did them all in turn. Agents on one thread share its PeerPool (a launch
 * passes between them in-process); an edge of a launch tree between two threads is a socket, as
 * between hosts. So the agents are dealt out by the launch tree of a step over the nodes in order
 * (fanout 8, `ebb run`'s default), whose edges then stay on one thread but for the top ones: the
 * tree's first level (nodes 1-8, the launcher's children) is dealt one by one, and each node
 * below goes with its ancestor on the second level (nodes 9-72), whose subtrees are dealt one by
 * one. A step over the first n nodes, of any n, then crosses threads at most 64 times and its
 * subtrees take turns over the threads.
 */
import type { LogFormat } from "../util/log.ts";
import { parentOf } from "../tbon/tree.ts";
import { AgentWorker } from "./agent-worker.ts";
import type { AgentThreadOptions } from "./agent-thread.ts";

/** The launch tree the dealing follows: `ebb run --fanout`'s default. */
const FANOUT = 8;
/** At most this many threads: the tree's second level has 64 subtrees to deal. */
export const MAX_AGENT_THREADS = FANOUT * FANOUT;

/** The thread (0..threads-1) of the node at `index` (0-based) among the cluster's nodes. */
export function threadOfNode(index: number, threads: number): number {
  if (index < FANOUT) return index % threads;
  let a = index;
  while (a >= FANOUT + FANOUT * FANOUT) a = parentOf(a, FANOUT);
  return (a - FANOUT) % threads;
}

export class AgentThreads {
  private constructor(private readonly workers: AgentWorker[]) {}

  /**
   * Starts `agents` on `threads` workers (fewer if there are fewer agents), each linked to the
   * controller by a port of its own from `link`; if any fails to start, the others stop.
   */
  static async start(agents: AgentThreadOptions[], threads: number, logFormat: LogFormat, fatal: (message: string) => void, link: () => MessagePort): Promise<AgentThreads> {
    const groups: AgentThreadOptions[][] = Array.from({ length: Math.max(1, Math.min(threads, agents.length)) }, () => []);
    agents.forEach((a, i) => groups[threadOfNode(i, groups.length)]!.push(a));
    const started = await Promise.allSettled(groups.map((g) => AgentWorker.start(g, logFormat, fatal, link())));
    const workers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = started.find((s) => s.status === "rejected");
    if (failed) {
      await Promise.allSettled(workers.map((w) => w.stop()));
      throw failed.reason;
    }
    return new AgentThreads(workers);
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
  }
}
