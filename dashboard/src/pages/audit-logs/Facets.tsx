import { useState } from "react";
import { useQuery } from "urql";
import { AuditFacetsDocument, type AuditEventFilter, type AuditFacetValueFieldsFragment } from "../../gql/graphql";
import { problemOf, useMediaQuery } from "../../kit";
import type { Filters } from "./filters";

type Dimension = "eventType" | "user" | "ipAddress" | "provider" | "severity";
const TITLES: Record<Dimension, string> = {
  eventType: "Event type",
  user: "User",
  ipAddress: "IP address",
  provider: "Provider",
  severity: "Severity",
};

/** The view's filters narrowed to one facet value (it replaces that facet's own filter). */
function narrowed(filters: Filters, dimension: Dimension, value: string): Filters {
  switch (dimension) {
    case "eventType":
      return { ...filters, eventTypes: [value] };
    case "user":
      return { ...filters, userIds: [value] };
    case "ipAddress":
      return { ...filters, ipAddress: value };
    case "provider":
      return { ...filters, providers: [value] };
    case "severity":
      return { ...filters, severities: [value] };
  }
}

/**
 * Beside the results: what the filter's events are made of (top values of each facet with their
 * counts, from the server within the histogram's budget). Clicking a value filters by it. On a narrow
 * screen the facets fold behind a button above the table.
 */
export function Facets({
  filter,
  filters,
  onApply,
  providerNames,
}: {
  filter: AuditEventFilter;
  filters: Filters;
  /** SSO providers' names by id and by slug: a provider is shown by name, its id on hover. */
  providerNames: Map<string, string>;
  onApply(filters: Filters, userLabel?: [string, string]): void;
}) {
  const wide = useMediaQuery("(min-width: 1101px)");
  const [open, setOpen] = useState(false);
  const [{ data, error }] = useQuery({ query: AuditFacetsDocument, variables: { filter } });
  const facets = data?.auditEventFacets;
  const shown = wide || open;
  return (
    <section className="facets" aria-label="Facets">
      {!wide && (
        <button type="button" className="facets-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          Facets
        </button>
      )}
      {shown && error && <p className="error">{problemOf(error)}</p>}
      {shown && facets && (
        <div className="facet-groups">
          {facets.sampled && <p className="muted">Estimated from a sample.</p>}
          {(Object.keys(TITLES) as Dimension[]).map((dimension) => {
            const values: AuditFacetValueFieldsFragment[] = facets[dimension];
            return (
              <div key={dimension} className="facet-group">
                <h2>{TITLES[dimension]}</h2>
                {values.length === 0 ? (
                  <p className="muted">None in these events.</p>
                ) : (
                  <ul data-testid={`facet-${dimension}`}>
                    {values
                      .map(({ value, count, label }) => ({
                        value,
                        count,
                        label: dimension === "provider" ? (providerNames.get(value) ?? label) : label,
                      }))
                      .map((entry) => (
                        <li key={entry.value}>
                          <button
                            type="button"
                            className="facet-value"
                            // The whole label (a long one is cut) and the code or id behind it.
                            title={entry.label === entry.value ? entry.label : `${entry.label} (${entry.value})`}
                            data-value={entry.value}
                            onClick={() =>
                              onApply(
                                narrowed(filters, dimension, entry.value),
                                dimension === "user" ? [entry.value, entry.label] : undefined,
                              )
                            }
                          >
                            <span className="facet-label">{entry.label}</span>{" "}
                            <span className="facet-count">{entry.count.toLocaleString("en")}</span>
                          </button>
                        </li>
                      ))}
                  </ul>
                )}
              </div>
            );
          })}
        </div>
      )}
    </section>
  );
}
