import { useCallback, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { useZone } from "../../app/zone";
import { Problem } from "../../kit";
import { useQuery } from "urql";
import { ProviderChoicesDocument, type SavedSearchFieldsFragment } from "../../gql/graphql";
import { alertFor, alertSettings, enableNotifications } from "./alerts";
import { EventChart } from "./EventChart";
import { EventDetail } from "./EventDetail";
import { EventsTable } from "./EventsTable";
import { Facets } from "./Facets";
import { FilterBar } from "./FilterBar";
import { filtersFromParams, filtersFromSaved, filtersToParams, toApiFilter, type Filters } from "./filters";
import { SavedSearches } from "./SavedSearches";
import { useAuditLog, type AuditEvent, type LiveState } from "./use-audit-log";

const LIVE_LABELS: Record<LiveState, string> = {
  off: "Live updates off",
  connecting: "Connecting…",
  live: "Live: new events appear as they are recorded",
  polling: "Live connection unavailable: refreshing every 30 s",
};

export function AuditLogsPage() {
  const [params, setParams] = useSearchParams();
  const { zone } = useZone();
  const filters = useMemo(() => filtersFromParams(params), [params]);
  const filterKey = `${JSON.stringify(filters)}|${zone}`;
  // Presets ("last 24 hours") resolve once per change of filters, not on every render.
  const apiFilter = useMemo(() => toApiFilter(filters, zone), [filterKey]);
  const live = params.get("live") === "1";
  const eventId = params.get("event");
  const [userLabels, setUserLabels] = useState(new Map<string, string>());
  const [opened, setOpened] = useState<AuditEvent | null>(null);
  const [notify, setNotify] = useState(alertSettings.notify);
  const [sound, setSound] = useState(alertSettings.sound);
  const [scrollTop, setScrollTop] = useState(0);
  const [{ data: providerChoices }] = useQuery({ query: ProviderChoicesDocument });
  const providerNames = useMemo(
    () =>
      new Map(
        (providerChoices?.ssoProviders ?? []).flatMap(
          (provider) =>
            [
              [provider.id, provider.name],
              [provider.slug, provider.name],
            ] as const,
        ),
      ),
    [providerChoices],
  );
  const log = useAuditLog(apiFilter, filterKey, live, alertFor);
  const selected = eventId ? (log.events.find((event) => event.id === eventId) ?? (opened?.id === eventId ? opened : null)) : null;

  const update = (change: (next: URLSearchParams) => void, replace = false) => {
    const next = new URLSearchParams(params);
    change(next);
    setParams(next, { replace });
  };
  const apply = (next: Filters, labels?: Map<string, string>) => {
    if (labels) setUserLabels(labels);
    update((draft) => {
      draft.delete("event");
      const merged = filtersToParams(next, draft);
      [...draft.keys()].forEach((key) => draft.delete(key));
      merged.forEach((value, key) => draft.append(key, value));
    });
  };
  const open = (event: AuditEvent) => {
    setOpened(event);
    update((draft) => draft.set("event", event.id), true);
  };
  const openSaved = (search: SavedSearchFieldsFragment) => apply(filtersFromSaved(search.filter));
  const onScrolledAway = useCallback((away: boolean) => log.setHoldNew(away), [log]);

  const count = log.pageInfo ? log.pageInfo.total + log.liveAdded : null;
  const total = count === null ? "…" : `${log.pageInfo?.totalCapped ? "≥ " : ""}${count.toLocaleString("en")}`;

  return (
    <div className="audit-page">
      <h1 className="sr-only">Audit log</h1>
      <FilterBar key={filterKey} filters={filters} userLabels={userLabels} onApply={apply} />
      <div className="toolbar">
        <p className="total" aria-live="polite">
          <strong data-testid="total">{total}</strong> {count === 1 && !log.pageInfo?.totalCapped ? "event" : "events"}
        </p>
        <label className="check">
          <input
            type="checkbox"
            checked={live}
            onChange={(event) => update((draft) => (event.target.checked ? draft.set("live", "1") : draft.delete("live")), true)}
          />
          Live
        </label>
        <span className={`live-state live-${log.liveState}`} role="status" data-testid="live-state">
          {LIVE_LABELS[log.liveState]}
        </span>
        {log.pending.length > 0 && (
          <button
            type="button"
            className="new-marker"
            onClick={() => {
              log.setHoldNew(false);
              setScrollTop((n) => n + 1);
            }}
          >
            {log.pending.length} new ↑
          </button>
        )}
        <label className="check">
          <input
            type="checkbox"
            checked={notify}
            onChange={async (event) => {
              const on = event.target.checked && (await enableNotifications());
              alertSettings.setNotify(on);
              setNotify(on);
            }}
          />
          Notify critical events
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={sound}
            onChange={(event) => {
              alertSettings.setSound(event.target.checked);
              setSound(event.target.checked);
            }}
          />
          Sound for security events
        </label>
        <Link className="button" to={`/exports?${filtersToParams(filters, new URLSearchParams()).toString()}`}>
          Export this view
        </Link>
        <details className="saved-menu">
          <summary>Saved searches</summary>
          <SavedSearches current={apiFilter} onOpen={openSaved} />
        </details>
      </div>
      <EventChart filter={apiFilter} onRange={(from, to) => apply({ ...filters, range: "", from, to })} />
      <Problem error={log.error} />
      <div className={`events-area${selected ? " with-detail" : ""}`}>
        <EventsTable
          events={log.events}
          hasMore={Boolean(log.pageInfo?.hasNextPage)}
          loading={log.loading}
          selectedId={selected?.id ?? null}
          onOpen={open}
          onLoadMore={() => void log.loadMore()}
          onScrolledAway={onScrolledAway}
          scrollToTopSignal={scrollTop}
          providerNames={providerNames}
        />
        <Facets
          filter={apiFilter}
          filters={filters}
          providerNames={providerNames}
          onApply={(next, user) => apply(next, user ? new Map(userLabels).set(user[0], user[1]) : undefined)}
        />
        {selected && (
          <EventDetail
            event={selected}
            onOpen={open}
            providerNames={providerNames}
            onClose={() => update((draft) => draft.delete("event"), true)}
            onFilter={(change) => apply({ ...filters, ...change })}
          />
        )}
      </div>
    </div>
  );
}
