/**
 * Points in time as Slurm writes them (sbatch --begin, sacct --starttime): `now[+-]N[units]`,
 * `HH:MM[:SS]` (the next such time for a start, today's for a bound), `YYYY-MM-DD[THH:MM[:SS]]`,
 * `midnight`, `noon`, `teatime` (16:00), `today`, `tomorrow`, and ISO 8601 with a zone; and as
 * people say them: `2 hours ago`, `an hour ago`, `now - 2 hours`, `yesterday` (its midnight, as
 * `today` is today's). Local time unless a zone is given. Returns epoch ms, or an error text.
 */
const UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
  w: 604800,
  week: 604800,
  weeks: 604800,
};
const unknownUnit = (text: string, unit: string) => ({ error: `"${text}": unknown unit "${unit}" (seconds, minutes, hours, days, weeks)` });

export function parseWhen(text: string, now: number, opts: { future?: boolean } = {}): number | { error: string } {
  const s = text.trim().toLowerCase().replace(/\s+/g, " ");
  const bad = { error: `"${text}" is not a time; use now-2hours, "2 hours ago", HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], midnight, noon, today, yesterday or tomorrow` };
  const rel = /^now(?: ?([+-]) ?(\d+) ?([a-z]*))?$/.exec(s);
  if (rel) {
    if (!rel[1]) return now;
    const unit = UNITS[rel[3] || "s"];
    if (unit === undefined) return unknownUnit(text, rel[3]!);
    return now + (rel[1] === "+" ? 1 : -1) * Number(rel[2]) * unit * 1000;
  }
  const ago = /^(\d+|an?) ?([a-z]+) ago$/.exec(s);
  if (ago) {
    const unit = UNITS[ago[2]!];
    if (unit === undefined) return unknownUnit(text, ago[2]!);
    return now - (/^\d/.test(ago[1]!) ? Number(ago[1]) : 1) * unit * 1000;
  }
  const day = (offset: number, h = 0, m = 0, sec = 0) => {
    const d = new Date(now);
    d.setDate(d.getDate() + offset);
    d.setHours(h, m, sec, 0);
    return d.getTime();
  };
  const named: Record<string, [number, number]> = { midnight: [0, 0], noon: [12, 0], teatime: [16, 0] };
  if (s in named) {
    const [h, m] = named[s]!;
    const t = day(0, h, m);
    return opts.future && t <= now ? day(1, h, m) : t;
  }
  if (s === "today") return day(0);
  if (s === "tomorrow") return day(1);
  if (s === "yesterday") return day(-1);
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (clock) {
    const [h, m, sec] = [Number(clock[1]), Number(clock[2]), Number(clock[3] ?? 0)];
    if (h > 23 || m > 59 || sec > 59) return bad;
    const t = day(0, h, m, sec);
    return opts.future && t <= now ? day(1, h, m, sec) : t;
  }
  const date = /^(\d{4})-(\d{2})-(\d{2})(?:t(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(s);
  if (date) {
    const [y, mo, d, h, mi, sec] = date.slice(1).map((x) => Number(x ?? 0));
    const t = new Date(y!, mo! - 1, d!, h, mi, sec).getTime();
    return Number.isNaN(t) || mo! < 1 || mo! > 12 || d! < 1 || d! > 31 ? bad : t;
  }
  if (/^\d{4}-\d{2}-\d{2}t[\d:.]+(z|[+-]\d{2}:?\d{2})$/.test(s)) {
    const t = Date.parse(text.trim());
    return Number.isNaN(t) ? bad : t;
  }
  return bad;
}
