import type { Registry } from "prom-client";

/**
 * Reads /metrics through parse-prometheus-text-format, a parser of the Prometheus text format that is
 * not ours (it has no type declarations: its prom2json-shaped output is typed here). It drops the labels
 * of histogram samples, so histograms are read from the registry itself (histogramCount).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheusTextFormat = require("parse-prometheus-text-format") as (text: string) => MetricFamily[];

export type Sample = { labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string };
export type MetricFamily = { name: string; help: string; type: string; metrics: Sample[] };

export type Scrape = {
  families: MetricFamily[];
  /** The samples of one family whose labels include `labels`. */
  samples(name: string, labels?: Record<string, string>): Sample[];
  /** The value of the one sample of `name` with `labels` (counters and gauges). */
  value(name: string, labels?: Record<string, string>): number;
};

export function parseMetrics(text: string): Scrape {
  const families = parsePrometheusTextFormat(text);
  const samples = (name: string, labels: Record<string, string> = {}) => {
    const family = families.find((candidate) => candidate.name === name);
    if (!family) throw new Error(`no metric ${name}`);
    return family.metrics.filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value));
  };
  return {
    families,
    samples,
    value(name, labels = {}) {
      const found = samples(name, labels);
      if (found.length !== 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`);
      if (found[0].value === undefined) throw new Error(`${name} is not a counter or gauge`);
      return Number(found[0].value);
    },
  };
}

/** Observations of a histogram with `labels`, from the process's own registry. */
export async function histogramCount(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((sample) => (sample as { metricName?: string }).metricName === `${name}_count`)
    .filter((sample) => Object.entries(labels).every(([key, value]) => String(sample.labels[key]) === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}
