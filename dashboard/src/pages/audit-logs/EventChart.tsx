import { useQuery } from "urql";
import { formatInZone } from "../../app/time";
import { useZone } from "../../app/zone";
import { AuditHistogramDocument, type AuditEventFilter } from "../../gql/graphql";
import { problemOf } from "../../kit";
import { SEVERITIES } from "./filters";

const WIDTH = 1000;
const HEIGHT = 120;

function widthLabel(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? "day" : `${seconds / 86_400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? "hour" : `${seconds / 3600} hours`;
  return seconds === 60 ? "minute" : `${seconds / 60} minutes`;
}

/** Events per time bucket, stacked by severity, for the current filter. */
export function EventChart({ filter, filterKey }: { filter: AuditEventFilter; filterKey: string }) {
  const { zone } = useZone();
  const [{ data, error, fetching }] = useQuery({ query: AuditHistogramDocument, variables: { filter, buckets: 60 }, context: undefined });
  const histogram = data?.auditEventHistogram;
  if (error) return <p className="chart-note">The chart could not be loaded: {problemOf(error)}</p>;
  if (!histogram) return <div className="chart placeholder" aria-busy={fetching} key={filterKey} />;
  const peak = Math.max(1, ...histogram.buckets.map((bucket) => bucket.total));
  const barWidth = WIDTH / Math.max(1, histogram.buckets.length);
  const summary = `Events per ${widthLabel(histogram.bucketSeconds)} by severity, from ${formatInZone(histogram.from, zone)} to ${formatInZone(histogram.to, zone)}${histogram.sampled ? " (estimated from a sample)" : ""}`;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={summary}>
        {histogram.buckets.map((bucket, index) => {
          let y = HEIGHT;
          return (
            <g key={bucket.start}>
              <title>{`${formatInZone(bucket.start, zone)}: ${bucket.total} events (${SEVERITIES.map((s) => `${bucket[s as "info"]} ${s}`).join(", ")})`}</title>
              {SEVERITIES.map((severity) => {
                const count = bucket[severity as "info"];
                const height = (count / peak) * (HEIGHT - 4);
                y -= height;
                return count ? (
                  <rect
                    key={severity}
                    className={`bar-${severity}`}
                    x={index * barWidth + 0.5}
                    y={y}
                    width={Math.max(barWidth - 1, 0.5)}
                    height={height}
                  />
                ) : null;
              })}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span>{summary}</span>
        <span className="legend" aria-hidden="true">
          {SEVERITIES.map((severity) => (
            <span key={severity} className={`legend-${severity}`}>
              {severity}
            </span>
          ))}
        </span>
      </figcaption>
    </figure>
  );
}
