CREATE TABLE `job_arrays` (
	`id` integer PRIMARY KEY NOT NULL,
	`spec` text NOT NULL,
	`tasks` integer NOT NULL,
	`first_task` integer NOT NULL,
	`last_task` integer NOT NULL,
	`argv` text,
	`script` text,
	`env` text NOT NULL,
	`exclude` text,
	`nodelist` text,
	`sizes` text,
	`dependency` text,
	`elastic_settings` text
);
