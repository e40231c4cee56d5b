import { parseFilter, type AuditFilterInput } from "./audit-filter";
import { AUDIT_EVENT_CATALOGUE, type AuditEventType } from "./audit.catalogue";
import { FACET_DIMENSIONS, type AuditFacetRepository, type FacetDimension } from "./audit-facets.repository";

/** Values shown per dimension by default, and at most. */
const DEFAULT_FACET_VALUES = 5;
const MAX_FACET_VALUES = 20;
/** Share of the table's pages read when counting exactly would overrun the budget (as the histogram). */
const FACET_SAMPLE_PERCENT = 2;

export type FacetValue = { value: string; label: string; count: number };
export type AuditFacets = { sampled: boolean } & Record<FacetDimension, FacetValue[]>;

/** A person's words for a value: an event type's meaning ("Failed login attempt"), a user's e-mail, else the value. */
function labelOf(dimension: FacetDimension, value: string, rowLabel: string | null): string {
  if (dimension === "eventType") {
    const meaning = AUDIT_EVENT_CATALOGUE[value as AuditEventType]?.meaning;
    return meaning ? meaning.charAt(0).toUpperCase() + meaning.slice(1) : value;
  }
  return rowLabel ?? value;
}

/**
 * What the events of a filter are made of: the top values of event type, user, IP address, provider and
 * severity with their counts. Counted within the same budget as the histogram; past it, estimated from
 * a sample of the table's pages (`sampled`).
 */
export class AuditFacetService {
  constructor(
    private readonly repository: AuditFacetRepository,
    private readonly settings: { budgetMs: number },
  ) {}

  async facets(filter: AuditFilterInput | null | undefined, limit = DEFAULT_FACET_VALUES): Promise<AuditFacets> {
    const query = parseFilter(filter);
    const top = Math.min(Math.max(Math.trunc(limit) || DEFAULT_FACET_VALUES, 1), MAX_FACET_VALUES);
    const exact = await this.repository.facets(query, top, this.settings.budgetMs);
    const rows = exact ?? (await this.repository.facetsSampled(query, top, FACET_SAMPLE_PERCENT));
    const facets = Object.fromEntries(FACET_DIMENSIONS.map((dimension) => [dimension, [] as FacetValue[]])) as Record<
      FacetDimension,
      FacetValue[]
    >;
    for (const row of rows)
      facets[row.dimension].push({ value: row.value, label: labelOf(row.dimension, row.value, row.label), count: row.count });
    return { sampled: exact === null, ...facets };
  }
}
