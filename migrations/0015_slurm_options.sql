ALTER TABLE `job_arrays` ADD `step` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `signal` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `requeue` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `restarts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `append_output` integer DEFAULT false NOT NULL;