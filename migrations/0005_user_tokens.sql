CREATE TABLE `user_tokens` (
	`hash` text PRIMARY KEY NOT NULL,
	`user` text NOT NULL,
	`admin` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
