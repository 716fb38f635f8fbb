/** A user mistake: printed as one line, exit status 2. */
export class UsageError extends Error {}

/** The command cannot go on, for a reason its message gives the user: one line, exit status 1. */
export class CommandError extends Error {}
