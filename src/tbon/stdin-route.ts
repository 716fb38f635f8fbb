/**
 * Where the launcher's standard input goes in a step's tree (StepSpec.stdin): the nodes that hold
 * a rank reading it, and which edges lead to them, so that input for rank 0 alone does not cross
 * the whole tree.
 */
import { parentOf, ROOT } from "./tree.ts";

/**
 * Node indices holding a rank that reads the standard input, given ranks per node and StepSpec.stdin;
 * `ranks`: each node's ranks when they are not numbered in blocks (StepSpec.distribution).
 */
export function readerNodes(tasks: readonly number[], stdin: "all" | number | undefined, ranks?: ReadonlyArray<readonly number[]>): number[] {
  if (stdin === undefined) return [];
  if (stdin === "all") return tasks.flatMap((t, i) => (t > 0 ? [i] : []));
  if (ranks) {
    const node = ranks.findIndex((here) => here.includes(stdin));
    return node < 0 ? [] : [node];
  }
  for (let node = 0, first = 0; node < tasks.length; first += tasks[node]!, node++) if (stdin >= first && stdin < first + tasks[node]!) return [node];
  return [];
}

/** Whether `node` is `top` or below it in the k-ary launch tree (tree.ts; ROOT holds every node). */
export function below(node: number, top: number, k: number): boolean {
  if (top === ROOT) return true;
  while (node > top) node = parentOf(node, k);
  return node === top;
}
