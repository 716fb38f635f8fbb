/**
 * A script's `--partition` as this cluster can take it. Scripts come from other clusters, whose
 * partitions this one seldom has: on a controller without partitions the name is left out with a
 * warning (the job may run on any node, as it would have to here anyway); a list (`-p gpu,short`,
 * Slurm's "whichever starts it first") becomes the first of them the cluster has. A single name
 * goes to the controller as given, which refuses a name it does not have, as Slurm does.
 */
import type { ApiClient } from "../api/client.ts";
import { UsageError } from "./errors.ts";

export async function partitionChoice(c: ApiClient, given: string | undefined, warn: (text: string) => void): Promise<string | undefined> {
  if (given === undefined) return undefined;
  const names = (await c.partitions()).partitions.map((p) => p.name);
  if (names.length === 0) {
    warn(`this cluster has no partitions: --partition=${given} left out, the job may run on any node`);
    return undefined;
  }
  const listed = given.split(",").map((p) => p.trim());
  if (listed.length === 1) return given;
  const first = listed.find((p) => names.includes(p));
  if (first === undefined) throw new UsageError(`--partition=${given}: none of them is a partition of this cluster; its partitions are ${names.join(", ")} (ebb partitions)`);
  warn(`--partition=${given}: ebb runs a job in one partition, ${first} (the first of them this cluster has)`);
  return first;
}
