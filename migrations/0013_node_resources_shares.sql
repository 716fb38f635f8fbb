ALTER TABLE `job_nodes` ADD `cores` text;--> statement-breakpoint
ALTER TABLE `job_nodes` ADD `mem_mib` integer;--> statement-breakpoint
ALTER TABLE `job_nodes` ADD `gpus` text;--> statement-breakpoint
ALTER TABLE `job_nodes` ADD `cpu_sec` real;--> statement-breakpoint
ALTER TABLE `job_nodes` ADD `peak_mem_mib` real;--> statement-breakpoint
ALTER TABLE `jobs` ADD `resources` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `usage` text;--> statement-breakpoint
ALTER TABLE `nodes` ADD `gpus` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `nodes` ADD `features` text DEFAULT '[]' NOT NULL;