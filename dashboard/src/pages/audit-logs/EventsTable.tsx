import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { Time } from "../../app/zone";
import { useMediaQuery } from "../../kit";
import type { AuditEvent } from "./use-audit-log";

/** A cell that may be cut short: its whole text is on hover (and in the event's detail). */
function Cell({ text, className, hover }: { text: string | null | undefined; className?: string; hover?: string }) {
  return (
    <span role="gridcell" className={className} title={hover ?? text ?? undefined}>
      {text ?? "—"}
    </span>
  );
}

const ROW_HEIGHT = 36;
/** On a phone each event is a card of three lines (time and severity; type; user and address). */
const CARD_HEIGHT = 70;
export const PHONE = "(max-width: 700px)";
/** No Action column: an event's action is its type's verb (user.created: create), shown in its detail. */
export const COLUMNS = ["Time", "Type", "Severity", "User", "Provider", "IP address", "Resource"];

type Props = {
  events: AuditEvent[];
  hasMore: boolean;
  loading: boolean;
  selectedId: string | null;
  onOpen(event: AuditEvent): void;
  onLoadMore(): void;
  /** Whether the reader has scrolled away from the newest events. */
  onScrolledAway(away: boolean): void;
  scrollToTopSignal: number;
  /** SSO providers' names by id and by slug: events name a provider by either. */
  providerNames: Map<string, string>;
};

/**
 * The events as a grid: only the rows in view (plus a few) are in the DOM, whatever the number
 * loaded; nearing the end loads the next page. Arrow keys, Page Up/Down, Home and End move between
 * rows, Enter opens one.
 */
export function EventsTable({
  events,
  hasMore,
  loading,
  selectedId,
  onOpen,
  onLoadMore,
  onScrolledAway,
  scrollToTopSignal,
  providerNames,
}: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState(0);
  const phone = useMediaQuery(PHONE);
  const rowHeight = phone ? CARD_HEIGHT : ROW_HEIGHT;
  const virtualizer = useVirtualizer({
    count: events.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 10,
    getItemKey: (index) => events[index].id,
  });
  const items = virtualizer.getVirtualItems();
  const last = items[items.length - 1];

  useEffect(() => {
    if (last && last.index >= events.length - 20 && hasMore && !loading) onLoadMore();
  }, [last, events.length, hasMore, loading, onLoadMore]);

  useEffect(() => virtualizer.measure(), [rowHeight, virtualizer]);

  useEffect(() => {
    if (scrollToTopSignal) scroller.current?.scrollTo({ top: 0 });
  }, [scrollToTopSignal]);

  const move = (index: number) => {
    const next = Math.max(0, Math.min(events.length - 1, index));
    setActive(next);
    virtualizer.scrollToIndex(next, { align: "auto" });
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scroller.current?.clientHeight ?? 400) / rowHeight) - 1);
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(active + 1),
      ArrowUp: () => move(active - 1),
      PageDown: () => move(active + page),
      PageUp: () => move(active - page),
      Home: () => move(0),
      End: () => move(events.length - 1),
      Enter: () => events[active] && onOpen(events[active]),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  };

  return (
    <div
      className="events-table"
      role="grid"
      aria-label="Audit events, newest first"
      aria-rowcount={events.length + 1}
      aria-activedescendant={events[active] ? `event-row-${events[active].id}` : undefined}
      tabIndex={0}
      onKeyDown={onKeyDown}
    >
      <div className="events-row events-head" role="row" aria-rowindex={1}>
        {COLUMNS.map((column) => (
          <span key={column} role="columnheader">
            {column}
          </span>
        ))}
      </div>
      {events.length === 0 && (
        // A grid holds rows only: with no events, the sentence is a row of its own (outside the scroller).
        <div className="events-empty" role="row" aria-rowindex={2}>
          <span role="gridcell" className={loading ? "loading-more" : "empty"}>
            {loading ? "Loading…" : "No events match these filters."}
          </span>
        </div>
      )}
      <div
        className="events-scroller"
        ref={scroller}
        data-testid="events-scroller"
        // A row group holds rows: with none (the empty state) the scroller is a plain box, not a stop for Tab.
        role={events.length ? "rowgroup" : undefined}
        tabIndex={events.length ? 0 : undefined}
        aria-label={events.length ? "Event rows" : undefined}
        onScroll={(event) => onScrolledAway(event.currentTarget.scrollTop > rowHeight)}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }} role="presentation">
          {items.map((item) => {
            const event = events[item.index];
            return (
              <div
                key={item.key}
                id={`event-row-${event.id}`}
                role="row"
                aria-rowindex={item.index + 2}
                aria-selected={event.id === selectedId}
                className={`events-row sev-${event.severity}${item.index === active ? " active" : ""}`}
                style={{ transform: `translateY(${item.start}px)`, height: rowHeight }}
                onClick={() => {
                  setActive(item.index);
                  onOpen(event);
                }}
              >
                <span role="gridcell">
                  <Time value={event.timestamp} />
                </span>
                <Cell className="mono" text={event.eventType} />
                <span role="gridcell">
                  <span className={`severity severity-${event.severity}`}>{event.severity}</span>
                </span>
                <Cell text={event.user?.email} />
                <Cell
                  text={event.provider ? (providerNames.get(event.provider) ?? event.provider) : null}
                  hover={
                    event.provider && providerNames.has(event.provider)
                      ? `${providerNames.get(event.provider)} (${event.provider})`
                      : undefined
                  }
                />
                <Cell className="mono" text={event.ipAddress} />
                <Cell text={event.resource ? `${event.resource.type} ${event.resource.label ?? event.resource.id}` : null} />
              </div>
            );
          })}
        </div>
        {loading && events.length > 0 && <p className="loading-more">Loading…</p>}
      </div>
    </div>
  );
}
