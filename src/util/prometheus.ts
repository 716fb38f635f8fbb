/**
 * The Prometheus text exposition format (GET /metrics) (version 0.0.4), written here rather than
 * with prom-client. Most of ebb's metrics are read from the controller's state at scrape time
 * (gauges with one sample per job or node); the few that are recorded as they happen are counters
 * and histograms with fixed buckets. Both fit in one small writer with no registry, no default
 * process metrics and nothing that needs Node's cluster module in the compiled binary.
 */

export type Labels = Record<string, string | number>;

/** One metric family: its samples, as `# HELP`, `# TYPE` and sample lines. */
export interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  samples: { labels?: Labels; value: number; suffix?: string }[];
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function number(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

function labelText(labels: Labels | undefined): string {
  if (!labels) return "";
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(String(v))}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

export function exposition(families: Family[]): string {
  let out = "";
  for (const f of families) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) out += `${f.name}${s.suffix ?? ""}${labelText(s.labels)} ${number(s.value)}\n`;
  }
  return out;
}

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A counter with labels, e.g. jobs ended by state; its name ends in _total (the 0.0.4 format's TYPE line names the sample). */
export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = JSON.stringify(labels);
    const v = this.values.get(key);
    if (v) v.value += by;
    else this.values.set(key, { labels, value: by });
  }

  /** Label sets that should show 0 before anything happened (a rate() needs the first sample). */
  zero(labels: Labels): this {
    this.inc(labels, 0);
    return this;
  }

  family(): Family {
    return { name: this.name, help: this.help, type: "counter", samples: [...this.values.values()].map((v) => ({ labels: v.labels, value: v.value })) };
  }
}

/** Cumulative histogram over fixed upper bounds (seconds). */
export class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}

  observe(value: number, labels: Labels = {}): void {
    const key = JSON.stringify(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  /** An empty series for these labels, so the family shows before the first observation. */
  zero(labels: Labels = {}): this {
    const key = JSON.stringify(labels);
    if (!this.series.has(key)) this.series.set(key, { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 });
    return this;
  }

  family(): Family {
    const samples: Family["samples"] = [];
    for (const s of this.series.values()) {
      this.buckets.forEach((le, i) => samples.push({ labels: { ...s.labels, le: number(le) }, value: s.counts[i]!, suffix: "_bucket" }));
      samples.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, suffix: "_bucket" });
      samples.push({ labels: s.labels, value: s.sum, suffix: "_sum" });
      samples.push({ labels: s.labels, value: s.count, suffix: "_count" });
    }
    return { name: this.name, help: this.help, type: "histogram", samples };
  }
}

/** Buckets for fast operations (an API call, a scheduling pass, an SQLite commit): 0.1 ms to 2.5 s. */
export const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;
/** Buckets for adaptations: 10 ms to 5 min. */
export const SLOW_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;
