import { useEffect, useRef, useState, type PointerEvent } from "react";
import { useQuery } from "urql";
import { formatInZone } from "../../app/time";
import { useZone } from "../../app/zone";
import { AuditHistogramDocument, type AuditEventFilter } from "../../gql/graphql";
import { plural, problemOf } from "../../kit";
import { SEVERITIES } from "./filters";

const HEIGHT = 150;
/** Room for the count labels (left) and the time labels (below). */
const LEFT = 44;
const BOTTOM = 22;
const TOP = 6;
/** A drag shorter than this is a click, not a range. */
const MIN_BRUSH_PX = 6;

function widthLabel(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? "day" : `${seconds / 86_400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? "hour" : `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? "minute" : `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

/** A round top for the count axis (1, 2, 5 × 10^n) at or above the peak. */
function niceTop(peak: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(Math.max(1, peak)));
  return [1, 2, 5, 10].map((step) => step * magnitude).find((top) => top >= peak) ?? peak;
}

/** A time label in the zone: the time of day for a range within two days, the day (and hour) for longer ones. */
function tickLabel(instant: number, spanMs: number, zone: string): string {
  const text = formatInZone(new Date(instant), zone);
  if (spanMs <= 2 * 86_400_000) return text.slice(11, 16);
  if (spanMs <= 14 * 86_400_000) return `${text.slice(5, 10)} ${text.slice(11, 13)}h`;
  return text.slice(0, 10);
}

/** The figure's drawn width, following the window. */
function useWidth(): [React.RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(Math.max(200, Math.floor(element.clientWidth))));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * Events per time bucket, stacked by severity, for the current filter: a count axis, time labels in the
 * chosen zone, a legend. Dragging across the bars picks that stretch of time as the view's range
 * (`onRange`, which puts it in the URL).
 */
export function EventChart({ filter, onRange }: { filter: AuditEventFilter; onRange(from: string, to: string): void }) {
  const { zone } = useZone();
  const [box, width] = useWidth();
  // About one bucket per 12 px, so a phone asks for fewer (the server picks a round bucket size within it).
  const buckets = Math.max(12, Math.min(120, Math.floor((width - LEFT) / 12)));
  const [{ data, error, fetching }] = useQuery({ query: AuditHistogramDocument, variables: { filter, buckets } });
  const [brush, setBrush] = useState<{ start: number; end: number } | null>(null);
  const histogram = data?.auditEventHistogram;

  if (error) return <p className="chart-note">The chart could not be loaded: {problemOf(error)}</p>;
  const plotWidth = width - LEFT;
  const plotHeight = HEIGHT - BOTTOM - TOP;
  const from = histogram ? Date.parse(histogram.from) : 0;
  const to = histogram ? Date.parse(histogram.to) : 0;
  const span = Math.max(1, to - from);
  const xOf = (instant: number) => LEFT + ((instant - from) / span) * plotWidth;
  const instantAt = (x: number) => from + ((Math.min(Math.max(x, LEFT), width) - LEFT) / plotWidth) * span;
  const peak = Math.max(1, ...(histogram?.buckets ?? []).map((bucket) => bucket.total));
  const top = niceTop(peak);
  const ticks = 5;
  const timeTicks = width < 500 ? 3 : 6;
  const summary = histogram
    ? `Events per ${widthLabel(histogram.bucketSeconds)} by severity, from ${formatInZone(histogram.from, zone)} to ${formatInZone(histogram.to, zone)} (${zone})${histogram.sampled ? ", estimated from a sample" : ""}. Drag across the bars to show that time.`
    : "Loading the chart…";

  const localX = (event: PointerEvent<SVGSVGElement>) => event.clientX - event.currentTarget.getBoundingClientRect().left;
  const onPointerDown = (event: PointerEvent<SVGSVGElement>) => {
    if (!histogram || event.button !== 0) return;
    event.currentTarget.setPointerCapture(event.pointerId);
    const x = localX(event);
    setBrush({ start: x, end: x });
  };
  const onPointerMove = (event: PointerEvent<SVGSVGElement>) => {
    if (brush) setBrush({ ...brush, end: localX(event) });
  };
  const onPointerUp = (event: PointerEvent<SVGSVGElement>) => {
    if (!brush) return;
    const end = localX(event);
    setBrush(null);
    if (Math.abs(end - brush.start) < MIN_BRUSH_PX) return;
    const [left, right] = [Math.min(brush.start, end), Math.max(brush.start, end)];
    onRange(new Date(Math.floor(instantAt(left))).toISOString(), new Date(Math.ceil(instantAt(right))).toISOString());
  };

  return (
    <figure className="chart" aria-busy={fetching}>
      <div ref={box} className="chart-plot">
        <svg
          width={width}
          height={HEIGHT}
          role="img"
          aria-label={summary}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          onPointerCancel={() => setBrush(null)}
          data-testid="event-chart"
        >
          {/* Count axis: gridlines with their counts. */}
          {Array.from({ length: ticks }, (_, index) => {
            const value = (top / (ticks - 1)) * index;
            const y = TOP + plotHeight - (value / top) * plotHeight;
            return (
              <g key={index} className="chart-grid">
                <line x1={LEFT} x2={width} y1={y} y2={y} />
                <text x={LEFT - 4} y={y + 4} textAnchor="end">
                  {Number.isInteger(value) ? value : value.toFixed(1)}
                </text>
              </g>
            );
          })}
          {histogram?.buckets.map((bucket) => {
            const start = Date.parse(bucket.start);
            const x = xOf(start);
            const barWidth = Math.max(1, xOf(start + histogram.bucketSeconds * 1000) - x - 1);
            let y = TOP + plotHeight;
            return (
              <g key={bucket.start}>
                <title>{`${formatInZone(bucket.start, zone)}: ${plural(bucket.total, "event")} (${SEVERITIES.map((s) => `${bucket[s as "info"]} ${s}`).join(", ")})`}</title>
                {SEVERITIES.map((severity) => {
                  const count = bucket[severity as "info"];
                  const height = (count / top) * plotHeight;
                  y -= height;
                  return count ? (
                    <rect key={severity} className={`bar-${severity}`} x={x + 0.5} y={y} width={barWidth} height={height} />
                  ) : null;
                })}
              </g>
            );
          })}
          {/* Time axis: labels in the chosen zone. */}
          {histogram &&
            Array.from({ length: timeTicks }, (_, index) => {
              const instant = from + (span / (timeTicks - 1)) * index;
              const anchor = index === 0 ? "start" : index === timeTicks - 1 ? "end" : "middle";
              return (
                <text key={index} className="chart-time" x={xOf(instant)} y={HEIGHT - 6} textAnchor={anchor}>
                  {tickLabel(instant, span, zone)}
                </text>
              );
            })}
          <line className="chart-axis" x1={LEFT} x2={width} y1={TOP + plotHeight} y2={TOP + plotHeight} />
          {brush && (
            <rect
              className="chart-brush"
              x={Math.min(brush.start, brush.end)}
              y={TOP}
              width={Math.abs(brush.end - brush.start)}
              height={plotHeight}
            />
          )}
        </svg>
      </div>
      <figcaption>
        <span>{summary}</span>
        <span className="legend">
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
