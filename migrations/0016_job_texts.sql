CREATE TABLE `job_texts` (
	`job_id` integer PRIMARY KEY NOT NULL,
	`script` text,
	`env` text NOT NULL
);
