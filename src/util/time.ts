/**
 * Slurm-style durations: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS".
 * A bare number is minutes, as in sbatch -t. Returns seconds, or an error text.
 */
export function parseDuration(text: string): number | { error: string } {
  const s = text.trim();
  const bad = { error: `"${text}" is not a duration; use minutes, MM:SS, HH:MM:SS or D-HH:MM:SS` };
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(s);
  if (!m) return bad;
  const [, days, a, b, c] = m;
  const n = (x: string | undefined) => (x === undefined ? 0 : Number(x));
  let seconds: number;
  if (days !== undefined) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = n(days) * 86400 + n(a) * 3600 + n(b) * 60 + n(c);
  } else if (c !== undefined) {
    seconds = n(a) * 3600 + n(b) * 60 + n(c);
  } else if (b !== undefined) {
    seconds = n(a) * 60 + n(b);
  } else {
    seconds = n(a) * 60;
  }
  return seconds;
}

/** 3725 -> "1:02:05", 65 -> "1:05", 90061 -> "1-01:01:01". */
export function formatDuration(totalSeconds: number): string {
  if (!Number.isFinite(totalSeconds)) return "UNLIMITED";
  const t = Math.max(0, Math.round(totalSeconds));
  const d = Math.floor(t / 86400);
  const h = Math.floor((t % 86400) / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  const pad = (x: number) => String(x).padStart(2, "0");
  if (d > 0) return `${d}-${pad(h)}:${pad(m)}:${pad(sec)}`;
  if (h > 0) return `${h}:${pad(m)}:${pad(sec)}`;
  return `${m}:${pad(sec)}`;
}
