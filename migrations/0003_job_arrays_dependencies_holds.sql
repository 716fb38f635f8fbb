ALTER TABLE `jobs` ADD `array_job_id` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `array_task_id` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `array_limit` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `held` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `dependency` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `begin_time` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `exclude` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `nodelist` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `error` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `user` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `submitted_by` integer;--> statement-breakpoint
CREATE INDEX `jobs_array` ON `jobs` (`array_job_id`);--> statement-breakpoint
CREATE INDEX `jobs_end` ON `jobs` (`end_time`);