CREATE TABLE `adaptations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`job_id` integer NOT NULL,
	`step_id` integer,
	`from_nodes` integer NOT NULL,
	`to_nodes` integer NOT NULL,
	`from_ranks` integer NOT NULL,
	`to_ranks` integer NOT NULL,
	`added` text NOT NULL,
	`removed` text NOT NULL,
	`state` text NOT NULL,
	`reason` text NOT NULL,
	`message` text,
	`requested_at` integer NOT NULL,
	`ended_at` integer,
	`times` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `adaptations_job` ON `adaptations` (`job_id`);--> statement-breakpoint
CREATE TABLE `perf_samples` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`job_id` integer NOT NULL,
	`time` integer NOT NULL,
	`node` text NOT NULL,
	`ranks` integer NOT NULL,
	`iterations` integer NOT NULL,
	`loop_ns` real NOT NULL,
	`comm_ns` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `perf_samples_job` ON `perf_samples` (`job_id`,`time`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `sample_interval` real;