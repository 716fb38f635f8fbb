/**
 * Partitions (Slurm's): named sets of nodes, overlapping allowed, each with a default and a maximum
 * time, a maximum node count, the users and groups allowed in it, a priority tier and per-user
 * limits; one of them is the default. A job runs in one partition, on its nodes only. As the
 * controller's config file has them (`partitions`); none configured: one pool of nodes, as before.
 * Pure: node names and users are passed in.
 */
import { z } from "zod";
import { expandHostlist } from "../util/hostlist.ts";

/** Per-user limits (Slurm's MaxJobs, MaxSubmitJobs, MaxTRESPerUser cpu/gres/gpu/node). */
export interface UserLimits {
  /** Jobs running at once. */
  maxJobs?: number;
  /** Jobs pending or running at once (refused at submit beyond it). */
  maxSubmitJobs?: number;
  /** Cores held by running jobs. */
  maxCpus?: number;
  /** GPUs held by running jobs. */
  maxGpus?: number;
  /** Nodes held by running jobs (a node counted once per job on it). */
  maxNodes?: number;
}

const count = z.int().min(0).max(1e9);
export const userLimitsSchema = z.strictObject({ maxJobs: count, maxSubmitJobs: count, maxCpus: count, maxGpus: count, maxNodes: count }).partial();

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const seconds = z.int().positive().max(365 * 86_400);

export const partitionSchema = z.strictObject({
  name: z.string().regex(NAME, "a partition name is letters, digits, '_', '.' or '-' (at most 64)"),
  /** "ALL", or a hostlist of node names (node[01-04],gpu1); nodes that register later join by name. */
  nodes: z.string().min(1).max(4096),
  default: z.boolean().optional(),
  /** Seconds a job gets when it asks for no time limit (else maxTime, else the controller's default). */
  defaultTime: seconds.optional(),
  /** Seconds: a job asking for more waits (PartitionTimeLimit). */
  maxTime: seconds.optional(),
  /** A job asking for more nodes waits (PartitionNodeLimit). */
  maxNodes: z.int().positive().max(1e6).optional(),
  /** Only these users may submit to it (absent: everyone, unless allowGroups). */
  allowUsers: z.array(z.string().min(1).max(64)).max(10_000).optional(),
  /** Only members of these groups may (with allowUsers: either). */
  allowGroups: z.array(z.string().min(1).max(64)).max(10_000).optional(),
  /** Priority tier: its waiting jobs go before those of lower tiers (default 0). */
  tier: z.int().min(0).max(1e6).optional(),
  /** Each user's limits within the partition. */
  limits: userLimitsSchema.optional(),
});
export type PartitionConfig = z.infer<typeof partitionSchema>;

export const partitionsSchema = z
  .array(partitionSchema)
  .max(1000)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    for (let i = 0; i < list.length; i++) {
      const p = list[i]!;
      if (seen.has(p.name)) ctx.addIssue({ code: "custom", message: `partition ${p.name} is defined twice`, path: [i, "name"] });
      seen.add(p.name);
      if (p.nodes !== "ALL") {
        const names = expandHostlist(p.nodes);
        if ("error" in names) ctx.addIssue({ code: "custom", message: names.error, path: [i, "nodes"] });
      }
      if (p.defaultTime !== undefined && p.maxTime !== undefined && p.defaultTime > p.maxTime) ctx.addIssue({ code: "custom", message: `defaultTime ${p.defaultTime} is above maxTime ${p.maxTime}`, path: [i, "defaultTime"] });
    }
    if (list.filter((p) => p.default).length > 1) ctx.addIssue({ code: "custom", message: "more than one partition is the default", path: [] });
  });

export interface Partition extends Omit<PartitionConfig, "nodes" | "default" | "tier" | "limits"> {
  /** Its node names; undefined: every node. */
  nodes?: ReadonlySet<string>;
  /** The hostlist as configured ("ALL" for every node). */
  nodesText: string;
  isDefault: boolean;
  tier: number;
  limits: UserLimits;
}

/** The configured partitions, checked (partitionsSchema) and ready to answer questions. */
export class Partitions {
  readonly list: readonly Partition[];
  readonly byName: ReadonlyMap<string, Partition>;
  /** Where a job that names none goes: the one marked default, else the first. */
  readonly default?: Partition;

  constructor(config: readonly PartitionConfig[] = []) {
    this.list = config.map((p) => {
      const names = p.nodes === "ALL" ? undefined : expandHostlist(p.nodes);
      if (names && "error" in names) throw new RangeError(`partition ${p.name}: nodes: ${names.error}`);
      return { ...p, nodes: names && new Set(names), nodesText: p.nodes, isDefault: false, tier: p.tier ?? 0, limits: p.limits ?? {} };
    });
    this.byName = new Map(this.list.map((p) => [p.name, p]));
    this.default = this.list.find((_, i) => config[i]!.default) ?? this.list[0];
    if (this.default) (this.default as { isDefault: boolean }).isDefault = true;
  }

  get configured(): boolean {
    return this.list.length > 0;
  }

  /**
   * The partition a job submitted by `user` (in `groups`) goes to: the one it names, else the
   * default; or why it may not. Undefined partition with no error: none are configured.
   */
  resolve(name: string | undefined, user: string | null, groups: () => readonly string[]): { partition?: Partition; error?: string } {
    if (!this.configured) return name === undefined ? {} : { error: `partition ${name} does not exist: this controller has no partitions (leave --partition out)` };
    const p = name === undefined ? this.default! : this.byName.get(name);
    if (!p) return { error: `partition ${name} does not exist; the partitions are ${this.list.map((x) => x.name).join(", ")} (ebb partitions lists them)` };
    const why = mayUse(p, user, groups);
    return why ? { error: why } : { partition: p };
  }
}

/** Why `user` may not submit to `p` (AllowUsers / AllowGroups), or undefined. */
export function mayUse(p: Partition, user: string | null, groups: () => readonly string[]): string | undefined {
  if (!p.allowUsers && !p.allowGroups) return undefined;
  if (user !== null && p.allowUsers?.includes(user)) return undefined;
  if (user !== null && p.allowGroups && groups().some((g) => p.allowGroups!.includes(g))) return undefined;
  const who = [p.allowUsers?.length ? `users ${p.allowUsers.join(", ")}` : "", p.allowGroups?.length ? `members of ${p.allowGroups.join(", ")}` : ""].filter(Boolean).join(" and ");
  return `user ${user ?? "(unknown)"} may not use partition ${p.name}: only ${who || "nobody"} may; choose another with --partition (ebb partitions lists them)`;
}

/** Whether node `name` is in partition `p`. */
export function inPartition(p: Partition, name: string): boolean {
  return p.nodes === undefined || p.nodes.has(name);
}

/** A job's time limit when it asks for none: the partition's default, else its maximum, else `fallback`. */
export function defaultTimeOf(p: Partition | undefined, fallback: number): number {
  return p?.defaultTime ?? p?.maxTime ?? fallback;
}
