/** The time window of `ebb history` and `ebb usage` (sacct's and sreport's -S/-E): its flags, and their times checked. */
import { defineArgs } from "./command.ts";
import { UsageError, whenFlag } from "./common.ts";

const FORMS = '"2 hours ago", now-2h, 08:00, 2030-01-31[T08:00], yesterday, today, midnight, ISO 8601';

/** --since/-S and --until/-E, each described as what it bounds (`since`: "Jobs active at or after"). */
export function windowArgs(what: { since: string; until: string }) {
  return defineArgs({
    since: { type: "string", alias: "S", description: `${what.since}: ${FORMS} (default: midnight)`, valueHint: "TIME" },
    until: { type: "string", alias: "E", description: `${what.until}, in the same forms (default: now)`, valueHint: "TIME" },
  });
}

/** The window as ISO times: since midnight unless --since; until now unless --until, which must come after --since (as sacct's -E). */
export function windowFlags(a: { since?: string; until?: string }): { since: string; until?: string } {
  const since = whenFlag(a.since ?? "midnight", "--since")!;
  const until = whenFlag(a.until, "--until");
  if (until !== undefined && Date.parse(until) <= Date.parse(since))
    throw new UsageError(`--until (${until}) is not after --since (${since}${a.since === undefined ? ", midnight by default" : ""}); give a --since before it`);
  return until === undefined ? { since } : { since, until };
}
