CREATE TABLE `plan_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`plan_id` integer NOT NULL,
	`job_id` integer NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`reason` text NOT NULL,
	`outcome` text,
	`detail` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `plan_items_plan` ON `plan_items` (`plan_id`);--> statement-breakpoint
CREATE INDEX `plan_items_job` ON `plan_items` (`job_id`);--> statement-breakpoint
CREATE INDEX `plan_items_status` ON `plan_items` (`status`);--> statement-breakpoint
ALTER TABLE `plans` DROP COLUMN `spawns`;--> statement-breakpoint
ALTER TABLE `plans` DROP COLUMN `starts`;--> statement-breakpoint
ALTER TABLE `plans` DROP COLUMN `resizes`;--> statement-breakpoint
ALTER TABLE `plans` DROP COLUMN `rejected`;