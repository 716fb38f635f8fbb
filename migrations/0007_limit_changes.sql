CREATE TABLE `limit_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`job_id` integer NOT NULL,
	`time` integer NOT NULL,
	`from_limit` integer NOT NULL,
	`to_limit` integer NOT NULL,
	`reason` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `limit_changes_job` ON `limit_changes` (`job_id`);--> statement-breakpoint
ALTER TABLE `adaptations` ADD `limit_ratio` real;--> statement-breakpoint
ALTER TABLE `adaptations` ADD `limit_source` text;