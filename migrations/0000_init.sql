CREATE TABLE `job_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`job_id` integer NOT NULL,
	`time` integer NOT NULL,
	`kind` text NOT NULL,
	`message` text NOT NULL,
	`data` text
);
--> statement-breakpoint
CREATE INDEX `job_events_job` ON `job_events` (`job_id`);--> statement-breakpoint
CREATE TABLE `job_nodes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`job_id` integer NOT NULL,
	`node` text NOT NULL,
	`position` integer NOT NULL,
	`since` integer NOT NULL,
	`until` integer
);
--> statement-breakpoint
CREATE INDEX `job_nodes_job` ON `job_nodes` (`job_id`);--> statement-breakpoint
CREATE INDEX `job_nodes_open` ON `job_nodes` (`until`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`state` text NOT NULL,
	`argv` text,
	`script` text,
	`nodes` integer NOT NULL,
	`min_nodes` integer NOT NULL,
	`max_nodes` integer NOT NULL,
	`elastic` integer DEFAULT false NOT NULL,
	`tasks` integer,
	`tasks_per_node` integer,
	`time_limit` integer NOT NULL,
	`env` text NOT NULL,
	`cwd` text NOT NULL,
	`output` text,
	`submit_time` integer NOT NULL,
	`start_time` integer,
	`end_time` integer,
	`exit_code` integer,
	`reason` text,
	`next_step` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_state` ON `jobs` (`state`);--> statement-breakpoint
CREATE TABLE `nodes` (
	`name` text PRIMARY KEY NOT NULL,
	`cpus` integer NOT NULL,
	`memory_mb` integer NOT NULL,
	`addr` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`registered_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `steps` (
	`job_id` integer NOT NULL,
	`step_id` integer NOT NULL,
	`argv` text NOT NULL,
	`tasks` integer NOT NULL,
	`nodes` text NOT NULL,
	`state` text NOT NULL,
	`start_time` integer NOT NULL,
	`end_time` integer,
	`exit_code` integer,
	PRIMARY KEY(`job_id`, `step_id`)
);
