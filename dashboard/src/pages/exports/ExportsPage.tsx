import { useMemo, useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { useSearchParams } from "react-router";
import { useZone } from "../../app/zone";
import {
  CreateAuditExportDocument,
  MatchingEventCountDocument,
  type AuditExportCompression,
  type AuditExportFormat,
} from "../../gql/graphql";
import { FilterBar } from "../audit-logs/FilterBar";
import { filtersFromParams, filtersToParams, isEmpty, toApiFilter, type Filters } from "../audit-logs/filters";
import { problemOf, type Outcome } from "../../kit";
import { ExportRequests, SubmitRow } from "./ExportRequests";

const FORMATS: Array<{ value: AuditExportFormat; label: string; hint: string }> = [
  { value: "CSV", label: "CSV", hint: "RFC 4180, one event a row; opens in a spreadsheet" },
  { value: "JSONL", label: "JSONL", hint: "one JSON event a line" },
  { value: "JSON", label: "JSON", hint: "one array of events" },
];
const COMPRESSIONS: Array<{ value: AuditExportCompression; label: string }> = [
  { value: "GZIP", label: "gzip (.gz)" },
  { value: "ZIP", label: "zip, with its manifest inside" },
];

/**
 * Exports: every event the audit log shows for a set of filters (the same filters, carried in the URL,
 * so "Export this view" on the audit log opens here with them), as a compressed file a worker writes.
 */
export function ExportsPage() {
  const [params, setParams] = useSearchParams();
  const { zone } = useZone();
  const filters = useMemo(() => filtersFromParams(params), [params]);
  const filterKey = `${JSON.stringify(filters)}|${zone}`;
  const apiFilter = useMemo(() => toApiFilter(filters, zone), [filterKey]);
  const [{ data: matching }] = useQuery({
    query: MatchingEventCountDocument,
    variables: { filter: apiFilter },
    requestPolicy: "network-only",
  });
  const [userLabels, setUserLabels] = useState(new Map<string, string>());
  const [format, setFormat] = useState<AuditExportFormat>("CSV");
  const [compression, setCompression] = useState<AuditExportCompression>("GZIP");
  const [{ fetching }, create] = useMutation(CreateAuditExportDocument);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [refresh, setRefresh] = useState(0);

  const apply = (next: Filters, labels?: Map<string, string>) => {
    if (labels) setUserLabels(labels);
    setParams(filtersToParams(next, new URLSearchParams()));
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // Resolved now: "last 24 hours" means the 24 hours before the click, as the audit log would show them.
    const result = await create({ input: { filter: toApiFilter(filters, zone), format, compression } });
    if (result.error || !result.data) {
      setOutcome({ error: true, text: result.error ? problemOf(result.error) : "The export was refused" });
      return;
    }
    setOutcome({
      error: false,
      text: `${format} export requested: it appears below, with its progress, and can be downloaded when ready.`,
    });
    setRefresh((n) => n + 1);
  };
  const pageInfo = matching?.auditEvents.pageInfo;

  return (
    <div className="exports-page">
      <h1>Exports</h1>
      <p className="muted">
        An export holds every event the audit log shows for these filters, with no row cap. Days are whole days in {zone}, the last one
        included. A worker writes the file; you download it here while it lasts.
      </p>
      <FilterBar key={filterKey} filters={filters} userLabels={userLabels} onApply={apply} />
      <form className="panel-form export-form" aria-labelledby="new-export-title" onSubmit={(event) => void submit(event)}>
        <h2 id="new-export-title">New export</h2>
        <p className="span-all" data-testid="export-scope">
          {isEmpty(filters) ? "Every event in the log" : "The events matching the filters above"}
          {pageInfo && (
            <>
              : <strong>{`${pageInfo.totalCapped ? "at least " : ""}${pageInfo.total.toLocaleString("en")}`}</strong> right now
            </>
          )}
          .
        </p>
        <fieldset>
          <legend>Format</legend>
          {FORMATS.map((choice) => (
            <label key={choice.value} className="check">
              <input
                type="radio"
                name="format"
                value={choice.value}
                checked={format === choice.value}
                onChange={() => setFormat(choice.value)}
              />
              {choice.label} <span className="muted">({choice.hint})</span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Compression</legend>
          {COMPRESSIONS.map((choice) => (
            <label key={choice.value} className="check">
              <input
                type="radio"
                name="compression"
                value={choice.value}
                checked={compression === choice.value}
                onChange={() => setCompression(choice.value)}
              />
              {choice.label}
            </label>
          ))}
        </fieldset>
        <SubmitRow label="Create export" disabled={fetching} outcome={outcome} />
      </form>
      <ExportRequests kind="EVENTS" title="Your exports" refresh={refresh} />
    </div>
  );
}
