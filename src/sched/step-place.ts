/**
 * Where an exact step (srun --exact / --exclusive) runs on the CPUs of its job that the job's other
 * exact steps leave free: the nodes it names, then the job's first nodes with room (as Slurm
 * spreads farmed steps over a job's nodes), its tasks laid out on what is free there.
 */
import { blockLayout, blockWithin, planeLayout } from "./layout.ts";

export interface ExactAsk {
  /** How many of the job's nodes the step runs on. */
  nodes: number;
  tasks: number;
  tasksPerNode?: number;
  /** srun -m plane=N: N tasks to each node in turn. */
  plane?: number;
  cpusPerTask: number;
  /** Indices into the job's nodes the step must run on (srun -w). */
  named: readonly number[];
}

export interface ExactPlace {
  /** Indices into the job's nodes, ascending. */
  picked: number[];
  /** Tasks on each picked node. */
  layout: number[];
  /** CPUs the step holds on each picked node: its tasks there times cpusPerTask. */
  cpus: number[];
}

/** The step's place on the job's nodes with `free` CPUs each (in the job's order); undefined when it does not fit now. */
export function placeExact(free: readonly number[], ask: ExactAsk): ExactPlace | undefined {
  const room = free.map((f) => Math.floor(f / ask.cpusPerTask));
  if (ask.nodes > free.length || ask.named.some((i) => room[i]! < 1)) return undefined;
  const inJobOrder = free.map((_, i) => i);
  // The job's first nodes with room; when their room is too little for the tasks, those with the most.
  const mostRoom = [...inJobOrder].sort((a, b) => room[b]! - room[a]! || a - b);
  for (const order of [inJobOrder, mostRoom]) {
    const place = tryNodes(room, ask, order);
    if (place) return place;
  }
  return undefined;
}

function tryNodes(room: readonly number[], ask: ExactAsk, order: readonly number[]): ExactPlace | undefined {
  const named = new Set(ask.named);
  const picked = [...named];
  for (const i of order) if (picked.length < ask.nodes && !named.has(i) && room[i]! >= 1) picked.push(i);
  if (picked.length < ask.nodes) return undefined;
  picked.sort((a, b) => a - b);
  const caps = picked.map((i) => room[i]!);
  const n = picked.length;
  const layout = ask.tasksPerNode ? blockLayout(n, ask.tasks) : ask.plane ? planeLayout(n, ask.tasks, ask.plane) : blockWithin(caps, ask.tasks);
  if (layout.some((t, k) => t > caps[k]! || t < 1)) return undefined;
  return { picked, layout, cpus: layout.map((t) => t * ask.cpusPerTask) };
}
