/**
 * Which host CPUs each node of a local cluster (`ebb up`) has: the nodes share out the host's
 * CPUs, node i's cores from its first CPU on, wrapping. The first cores (where one-rank-per-node
 * steps run) spread over the host: node i starts where i × cpus lands, moved on by one CPU for
 * each lap of the host's CPUs those starts have made. Moving on for each wrap of the CPUs instead
 * put every node on the same first CPU whenever the host's CPUs divide cpus-per-node (2 CPUs, 4
 * cores a node): MPI ranks that busy-poll then shared one CPU, and a step of many small messages
 * ran for minutes instead of seconds.
 */
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Node `node`'s CPU ids, core k on the k-th; `hostCpus` non-empty, `cpus` at least 1. */
export function nodeCpuIds(node: number, cpus: number, hostCpus: readonly number[]): number[] {
  const h = hostCpus.length;
  // Starts i × cpus repeat after this many nodes.
  const lap = h / gcd(cpus % h, h);
  const first = (node * cpus + Math.floor(node / lap)) % h;
  return hostCpus.map((_, k) => hostCpus[(first + k) % h]!);
}
