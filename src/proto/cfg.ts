/** CFG monitoring data at the boundaries: a rank's table file (rank -> agent) and a node's reduced CFG (agent -> controller). */
import { z } from "zod";

const num = z.number().finite();
const site = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const CfgRow = z.object({
  site,
  type: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3), z.literal(4)]),
  head: z.boolean(),
  body: z.boolean(),
  re: z.number().int().nonnegative(),
  rv: z.number().int().nonnegative(),
  tail: site.nullable(),
  headOf: site.nullable(),
  reentrySource: site.nullable(),
  created: num,
  last: num,
  detected: num,
  detectedVisits: z.number().int().nonnegative(),
  tmt: num.nonnegative(),
  tmtLast: num.nonnegative(),
  offset: num,
  offsetCount: z.number().int().nonnegative(),
});

/** What a rank writes to its EBB_CFG_FILE (and the agent reads from the C library's shm block, converted). */
export const RankCfgFile = z.object({
  rank: z.number().int().nonnegative(),
  origin: num,
  skipped: z.number().int().nonnegative(),
  rows: z.array(CfgRow).max(1 << 20),
});
export type RankCfgFile = z.infer<typeof RankCfgFile>;

export const ReducedLoop = z.object({
  key: z.string().max(1 << 20),
  head: site,
  ranks: z.array(z.number().int().nonnegative()),
  visitCounts: z.array(z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])),
  visits: z.number().int().nonnegative(),
  iterations: z.number().nonnegative(),
  loopTime: num,
  mpiTime: num,
  last: num,
  parent: z.string().nullable(),
  reentries: z.number().int().nonnegative(),
});

export const NodeCfg = z.object({ loops: z.array(ReducedLoop) });
