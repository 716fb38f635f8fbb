DROP INDEX `jobs_end`;--> statement-breakpoint
CREATE INDEX `jobs_end` ON `jobs` (`end_time`) WHERE "jobs"."end_time" IS NOT NULL;--> statement-breakpoint
DROP INDEX `plan_items_status`;--> statement-breakpoint
CREATE INDEX `plan_items_status` ON `plan_items` (`status`) WHERE "plan_items"."status" = 'accepted';