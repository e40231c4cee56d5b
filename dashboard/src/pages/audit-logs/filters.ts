import type { AuditEventFilter, SavedSearchFieldsFragment } from "../../gql/graphql";
import { dayEnd, dayStart } from "../../app/time";

/** The view's filters, as the URL carries them: a copied link reopens the same view. */
export type Filters = {
  search: string;
  userIds: string[];
  providers: string[];
  eventTypes: string[];
  severities: string[];
  /** A preset ("1h", "24h", "7d", "30d") or "" for the custom from/to (or no range). */
  range: string;
  /** YYYY-MM-DD (a day in the viewer's zone) or an ISO date-time. */
  from: string;
  to: string;
  ipAddress: string;
  requestId: string;
  sessionId: string;
};

export const RANGE_PRESETS: Array<{ value: string; label: string; ms: number }> = [
  { value: "1h", label: "Last hour", ms: 3_600_000 },
  { value: "24h", label: "Last 24 hours", ms: 86_400_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
  { value: "30d", label: "Last 30 days", ms: 30 * 86_400_000 },
];

export const SEVERITIES = ["info", "warning", "error", "critical"];

const LISTS = { user: "userIds", provider: "providers", type: "eventTypes", severity: "severities" } as const;
const TEXTS = { q: "search", range: "range", from: "from", to: "to", ip: "ipAddress", request: "requestId", session: "sessionId" } as const;

export function filtersFromParams(params: URLSearchParams): Filters {
  const filters: Filters = {
    search: "",
    userIds: [],
    providers: [],
    eventTypes: [],
    severities: [],
    range: "",
    from: "",
    to: "",
    ipAddress: "",
    requestId: "",
    sessionId: "",
  };
  for (const [param, key] of Object.entries(LISTS)) filters[key] = params.getAll(param).filter(Boolean);
  for (const [param, key] of Object.entries(TEXTS)) filters[key] = params.get(param) ?? "";
  return filters;
}

/** The filters as URL parameters, keeping the view's other parameters (live, event). */
export function filtersToParams(filters: Filters, base: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams(base);
  for (const [param, key] of Object.entries(LISTS)) {
    params.delete(param);
    for (const value of filters[key]) params.append(param, value);
  }
  for (const [param, key] of Object.entries(TEXTS)) {
    if (filters[key]) params.set(param, filters[key]);
    else params.delete(param);
  }
  return params;
}

function moment(value: string, zone: string, end: boolean): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return (end ? dayEnd(value, zone) : dayStart(value, zone)).toISOString();
  return value;
}

/** What the API gets: dates resolved in the viewer's zone, presets relative to `now`. */
export function toApiFilter(filters: Filters, zone: string, now = Date.now()): AuditEventFilter {
  const filter: AuditEventFilter = {};
  if (filters.search.trim()) filter.search = filters.search.trim();
  if (filters.userIds.length) filter.userIds = filters.userIds;
  if (filters.providers.length) filter.providers = filters.providers;
  if (filters.eventTypes.length) filter.eventTypes = filters.eventTypes;
  if (filters.severities.length) filter.severities = filters.severities;
  const preset = RANGE_PRESETS.find((candidate) => candidate.value === filters.range);
  if (preset) filter.from = new Date(now - preset.ms).toISOString();
  else {
    if (filters.from) filter.from = moment(filters.from, zone, false);
    if (filters.to) filter.to = moment(filters.to, zone, true);
  }
  if (filters.ipAddress.trim()) filter.ipAddress = filters.ipAddress.trim();
  if (filters.requestId) filter.requestId = filters.requestId;
  if (filters.sessionId) filter.sessionId = filters.sessionId;
  return filter;
}

/** A saved search's filter back into the view's terms (its dates are the instants saved). */
export function filtersFromSaved(saved: SavedSearchFieldsFragment["filter"]): Filters {
  return {
    search: saved.search ?? "",
    userIds: saved.userIds ?? [],
    providers: saved.providers ?? [],
    eventTypes: saved.eventTypes ?? [],
    severities: saved.severities ?? [],
    range: "",
    from: saved.from ?? "",
    to: saved.to ?? "",
    ipAddress: saved.ipAddress ?? "",
    requestId: saved.requestId ?? "",
    sessionId: saved.sessionId ?? "",
  };
}

export function isEmpty(filters: Filters): boolean {
  return JSON.stringify(toApiFilter(filters, "UTC")) === "{}";
}
