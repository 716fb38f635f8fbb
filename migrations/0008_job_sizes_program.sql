ALTER TABLE `jobs` ADD `sizes` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `program` text;