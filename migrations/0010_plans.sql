CREATE TABLE `plans` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`time` integer NOT NULL,
	`policy` text NOT NULL,
	`spawns` text NOT NULL,
	`starts` text NOT NULL,
	`resizes` text NOT NULL,
	`reservations` text NOT NULL,
	`rejected` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `plans_time` ON `plans` (`time`);