DROP INDEX `job_nodes_open`;--> statement-breakpoint
CREATE INDEX `job_nodes_open` ON `job_nodes` (`job_id`) WHERE "job_nodes"."until" IS NULL;