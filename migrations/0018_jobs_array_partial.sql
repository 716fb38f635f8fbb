DROP INDEX `jobs_array`;--> statement-breakpoint
CREATE INDEX `jobs_array` ON `jobs` (`array_job_id`) WHERE "jobs"."array_job_id" IS NOT NULL;