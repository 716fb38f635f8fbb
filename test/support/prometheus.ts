/** The Prometheus text format read back by a real parser (parse-prometheus-text-format, a port of the Python client's). */
// @ts-expect-error: the package ships no types; its output is typed below.
import parsePrometheusTextFormat from "parse-prometheus-text-format";

export interface Sample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
export interface MetricFamily {
  name: string;
  help: string;
  type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  metrics: Sample[];
}

export function parseMetrics(text: string): Map<string, MetricFamily> {
  const families = parsePrometheusTextFormat(text) as MetricFamily[];
  return new Map(families.map((f) => [f.name, f]));
}

/** The one sample of `name` whose labels include `labels`. */
export function sample(m: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): Sample {
  const f = m.get(name);
  if (!f) throw new Error(`no metric ${name}`);
  const hits = f.metrics.filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  if (hits.length !== 1) throw new Error(`${hits.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return hits[0]!;
}

/**
 * One series of a labelled histogram. The parser folds a histogram's series into one (it follows
 * prom2json, whose histograms have no labels but le), so the series' own lines are parsed alone,
 * its labels but le taken off.
 */
export function histogram(text: string, name: string, labels: Record<string, string>): Sample {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const lines = text.split("\n").filter((l) => l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `) || (/^\w+/.exec(l)?.[0]?.startsWith(`${name}_`) && want.every((w) => l.includes(w))));
  const stripped = lines.map((l) => (l.startsWith("#") ? l : l.replace(/\{([^}]*)\}/, (_, inner: string) => {
    const rest = inner.split(",").filter((kv) => !want.includes(kv));
    return rest.length ? `{${rest.join(",")}}` : "";
  })));
  return sample(parseMetrics(`${stripped.join("\n")}\n`), name);
}

export const value = (m: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}) => Number(sample(m, name, labels).value);
