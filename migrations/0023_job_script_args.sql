ALTER TABLE `job_arrays` ADD `args` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `args` text;