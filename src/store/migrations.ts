/**
 * The drizzle-kit migrations of migrations/, built into the program (source runs and the compiled
 * binary alike), as drizzle's migrator records them. A new migration is one more import below;
 * a test checks that every journal entry has its SQL here.
 */
import { createHash } from "node:crypto";
import type { MigrationMeta } from "drizzle-orm/migrator";
import journal from "../../migrations/meta/_journal.json" with { type: "json" };
import m0000 from "../../migrations/0000_init.sql" with { type: "text" };
import m0001 from "../../migrations/0001_elastic.sql" with { type: "text" };
import m0002 from "../../migrations/0002_job_elastic_settings.sql" with { type: "text" };
import m0003 from "../../migrations/0003_job_arrays_dependencies_holds.sql" with { type: "text" };
import m0004 from "../../migrations/0004_node_drain.sql" with { type: "text" };
import m0005 from "../../migrations/0005_user_tokens.sql" with { type: "text" };
import m0006 from "../../migrations/0006_job_cfgs.sql" with { type: "text" };
import m0007 from "../../migrations/0007_limit_changes.sql" with { type: "text" };
import m0008 from "../../migrations/0008_job_sizes_program.sql" with { type: "text" };
import m0009 from "../../migrations/0009_job_overcommit.sql" with { type: "text" };
import m0010 from "../../migrations/0010_plans.sql" with { type: "text" };
import m0011 from "../../migrations/0011_plan_items.sql" with { type: "text" };
import m0012 from "../../migrations/0012_job_arrays_shared.sql" with { type: "text" };
import m0013 from "../../migrations/0013_node_resources_shares.sql" with { type: "text" };
import m0014 from "../../migrations/0014_job_partition.sql" with { type: "text" };
import m0015 from "../../migrations/0015_slurm_options.sql" with { type: "text" };
import m0016 from "../../migrations/0016_job_texts.sql" with { type: "text" };
import m0017 from "../../migrations/0017_partial_indexes.sql" with { type: "text" };
import m0018 from "../../migrations/0018_jobs_array_partial.sql" with { type: "text" };
import m0019 from "../../migrations/0019_job_nodes_open_partial.sql" with { type: "text" };
import m0020 from "../../migrations/0020_adaptation_restart_step.sql" with { type: "text" };
import m0021 from "../../migrations/0021_node_owner_since.sql" with { type: "text" };
import m0022 from "../../migrations/0022_job_texts_packed.sql" with { type: "text" };
import m0023 from "../../migrations/0023_job_script_args.sql" with { type: "text" };
import m0024 from "../../migrations/0024_step_name.sql" with { type: "text" };

export const MIGRATION_SQL: Record<string, string> = {
  "0000_init": m0000,
  "0001_elastic": m0001,
  "0002_job_elastic_settings": m0002,
  "0003_job_arrays_dependencies_holds": m0003,
  "0004_node_drain": m0004,
  "0005_user_tokens": m0005,
  "0006_job_cfgs": m0006,
  "0007_limit_changes": m0007,
  "0008_job_sizes_program": m0008,
  "0009_job_overcommit": m0009,
  "0010_plans": m0010,
  "0011_plan_items": m0011,
  "0012_job_arrays_shared": m0012,
  "0013_node_resources_shares": m0013,
  "0014_job_partition": m0014,
  "0015_slurm_options": m0015,
  "0016_job_texts": m0016,
  "0017_partial_indexes": m0017,
  "0018_jobs_array_partial": m0018,
  "0019_job_nodes_open_partial": m0019,
  "0020_adaptation_restart_step": m0020,
  "0021_node_owner_since": m0021,
  "0022_job_texts_packed": m0022,
  "0023_job_script_args": m0023,
  "0024_step_name": m0024,
};

export function loadMigrations(): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const sql = MIGRATION_SQL[entry.tag];
    if (sql === undefined) throw new Error(`migration ${entry.tag} is in the journal but not in src/store/migrations.ts`);
    return {
      sql: sql.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(sql).digest("hex"),
    };
  });
}
