import { useEffect } from "react";
import { useClient, useQuery } from "urql";
import { formatInZone } from "../../app/time";
import { Time, useZone } from "../../app/zone";
import {
  AuditExportListDocument,
  CreateAuditExportDownloadUrlDocument,
  type AuditExportFieldsFragment,
  type AuditExportKind,
} from "../../gql/graphql";
import { DataTable, OutcomeLine, Problem, problemOf, useActionOutcome, type Outcome } from "../../kit";

/** How often the list asks again while one of its requests is waiting or being written. */
const PROGRESS_POLL_MS = 1_000;

const STATUS_LABELS: Record<AuditExportFieldsFragment["status"], string> = {
  QUEUED: "Waiting for a worker",
  RUNNING: "Being written",
  COMPLETED: "Ready",
  FAILED: "Failed",
  EXPIRED: "Expired (file removed)",
};

export type ExportRequest = AuditExportFieldsFragment;

/** A day stays a day; an instant is shown in the viewer's zone, as every other time on the page. */
function instant(value: unknown, zone: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(String(value)) ? String(value) : formatInZone(String(value), zone);
}

/** What a request covers, in a line: the export's filter (its instants in the viewer's zone) or the report's template and period. */
export function describeRequest(request: ExportRequest, zone: string): string {
  const params = request.params as {
    filter?: Record<string, unknown>;
    compression?: string;
    report?: { template: string; from: string; to: string };
  };
  if (params.report) {
    const { template, from, to } = params.report;
    return `${template.replace(/_/g, " ")} report, ${instant(from, zone)} to ${instant(to, zone)}`;
  }
  const { from, to, ...rest } = params.filter ?? {};
  const range = from ? `${instant(from, zone)} to ${instant(to, zone)}` : `up to ${instant(to, zone)}`;
  const parts = Object.entries(rest).map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(", ") : String(value)}`);
  return [range, ...parts].join("; ");
}

function size(bytes: number | null): string {
  if (bytes === null) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The viewer's own exports or reports, newest first: progress while a worker writes one (asked again
 * every second until none is waiting or running), and a download through a short-lived signed URL.
 */
export function ExportRequests({ kind, title, refresh }: { kind: AuditExportKind; title: string; refresh: number }) {
  const client = useClient();
  const { zone } = useZone();
  const [{ data, error }, reload] = useQuery({ query: AuditExportListDocument, variables: { kind }, requestPolicy: "network-only" });
  const { outcome, say } = useActionOutcome();
  const requests = data?.auditExports ?? [];
  const active = requests.some((request) => request.status === "QUEUED" || request.status === "RUNNING");

  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => reload({ requestPolicy: "network-only" }), PROGRESS_POLL_MS);
    return () => clearInterval(timer);
  }, [active, reload]);

  // A new request from the form above: the list shows it (and its progress) at once.
  useEffect(() => {
    if (refresh > 0) reload({ requestPolicy: "network-only" });
  }, [refresh, reload]);

  const labelOf = (request: ExportRequest) =>
    `${request.format.toUpperCase()} ${kind === "EVENTS" ? "export" : "report"} of ${describeRequest(request, zone)}`;

  const download = async (request: ExportRequest) => {
    say(null);
    const result = await client.mutation(CreateAuditExportDownloadUrlDocument, { id: request.id }).toPromise();
    const url = result.data?.createAuditExportDownloadUrl.url;
    if (!url) {
      say(result.error ? problemOf(result.error) : "No download link", true);
      return;
    }
    // The link is signed for this viewer and lives a few minutes: it is followed at once, never shown or kept.
    const link = document.createElement("a");
    link.href = url;
    link.download = request.fileName ?? "";
    document.body.append(link);
    link.click();
    link.remove();
    say(`Downloading ${request.fileName}.`);
  };

  return (
    <section aria-labelledby={`${kind}-list-title`} className="export-requests">
      <h2 id={`${kind}-list-title`}>{title}</h2>
      <OutcomeLine outcome={outcome} />
      <Problem error={error} />
      <DataTable<ExportRequest>
        label={title}
        rows={requests}
        loaded={Boolean(data)}
        rowKey={(request) => request.id}
        rowProps={(request) => ({ "data-testid": `request-${request.id}`, "data-status": request.status })}
        empty="None yet."
        columns={[
          { header: "Asked for", cell: (request) => <Time value={request.createdAt} /> },
          { header: "What", cell: (request) => describeRequest(request, zone) },
          {
            header: "Format",
            cell: (request) =>
              `${request.format.toUpperCase()}${(request.params as { compression?: string }).compression === "zip" ? " (zip)" : kind === "EVENTS" ? " (gzip)" : ""}`,
          },
          {
            header: "Status",
            cell: (request) => (
              <>
                <span className={`request-status status-${request.status.toLowerCase()}`}>{STATUS_LABELS[request.status]}</span>
                {(request.status === "RUNNING" || request.status === "QUEUED") && (
                  <progress max={1} value={request.progress} aria-label={`Progress of the ${labelOf(request)}`}>
                    {Math.round(request.progress * 100)}%
                  </progress>
                )}
                {request.error && <span className="error"> {request.error}</span>}
              </>
            ),
          },
          { header: "Events", cell: (request) => request.rowsWritten.toLocaleString("en") },
          {
            header: "File",
            cell: (request) =>
              request.status === "COMPLETED" ? (
                <>
                  <button type="button" onClick={() => void download(request)} aria-label={`Download the ${labelOf(request)}`}>
                    Download
                  </button>{" "}
                  <span className="muted">
                    {size(request.fileBytes)}
                    {request.expiresAt && (
                      <>
                        , until <Time value={request.expiresAt} />
                      </>
                    )}
                  </span>
                </>
              ) : (
                <span className="muted">—</span>
              ),
          },
        ]}
      />
    </section>
  );
}
/** A request form's submit button, with what became of the last request beside it (announced to screen readers). */
export function SubmitRow({ label, disabled, outcome }: { label: string; disabled: boolean; outcome: Outcome | null }) {
  return (
    <div className="form-actions span-all">
      <button type="submit" className="primary" disabled={disabled}>
        {label}
      </button>
      {outcome && (
        <span role={outcome.error ? "alert" : "status"} className={outcome.error ? "error" : undefined}>
          {outcome.text}
        </span>
      )}
    </div>
  );
}
