import { useEffect, useState } from "react";
import { useClient, useQuery } from "urql";
import { formatInZone } from "../../app/time";
import { Time, useZone } from "../../app/zone";
import {
  AuditExportListDocument,
  CreateAuditExportDownloadUrlDocument,
  type AuditExportFieldsFragment,
  type AuditExportKind,
} from "../../gql/graphql";

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

/** What a request covers, in a line: the export's filter (its instants in the viewer's zone) or the report's template and period. */
export function describeRequest(request: ExportRequest, zone: string): string {
  const params = request.params as {
    filter?: Record<string, unknown>;
    compression?: string;
    report?: { template: string; from: string; to: string };
  };
  if (params.report) {
    const { template, from, to } = params.report;
    return `${template.replace(/_/g, " ")} report, ${from} to ${to}`;
  }
  const { from, to, ...rest } = params.filter ?? {};
  const instant = (value: unknown) => (/^\d{4}-\d{2}-\d{2}$/.test(String(value)) ? String(value) : formatInZone(String(value), zone));
  const range = from ? `${instant(from)} to ${instant(to)}` : `up to ${instant(to)}`;
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
  const [message, setMessage] = useState<string | null>(null);
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

  const download = async (request: ExportRequest) => {
    setMessage(null);
    const result = await client.mutation(CreateAuditExportDownloadUrlDocument, { id: request.id }).toPromise();
    const url = result.data?.createAuditExportDownloadUrl.url;
    if (!url) {
      setMessage(result.error?.graphQLErrors[0]?.message ?? result.error?.message ?? "No download link");
      return;
    }
    // The link is signed for this viewer and lives a few minutes: it is followed at once, never shown or kept.
    const link = document.createElement("a");
    link.href = url;
    link.download = request.fileName ?? "";
    document.body.append(link);
    link.click();
    link.remove();
    setMessage(`Downloading ${request.fileName}.`);
  };

  return (
    <section aria-labelledby={`${kind}-list-title`} className="export-requests">
      <h2 id={`${kind}-list-title`}>{title}</h2>
      {message && <p role="status">{message}</p>}
      {error && (
        <p className="error" role="alert">
          {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}
      {data && requests.length === 0 && <p className="muted">None yet.</p>}
      {requests.length > 0 && (
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Asked for</th>
              <th scope="col">What</th>
              <th scope="col">Format</th>
              <th scope="col">Status</th>
              <th scope="col">Events</th>
              <th scope="col">File</th>
            </tr>
          </thead>
          <tbody>
            {requests.map((request) => {
              const label = `${request.format.toUpperCase()} ${kind === "EVENTS" ? "export" : "report"} of ${describeRequest(request, zone)}`;
              return (
                <tr key={request.id} data-testid={`request-${request.id}`} data-status={request.status}>
                  <td>
                    <Time value={request.createdAt} />
                  </td>
                  <td>{describeRequest(request, zone)}</td>
                  <td>
                    {request.format.toUpperCase()}
                    {(request.params as { compression?: string }).compression === "zip" ? " (zip)" : kind === "EVENTS" ? " (gzip)" : ""}
                  </td>
                  <td>
                    <span className={`request-status status-${request.status.toLowerCase()}`}>{STATUS_LABELS[request.status]}</span>
                    {(request.status === "RUNNING" || request.status === "QUEUED") && (
                      <progress max={1} value={request.progress} aria-label={`Progress of the ${label}`}>
                        {Math.round(request.progress * 100)}%
                      </progress>
                    )}
                    {request.error && <span className="error"> {request.error}</span>}
                  </td>
                  <td>{request.rowsWritten.toLocaleString("en")}</td>
                  <td>
                    {request.status === "COMPLETED" ? (
                      <>
                        <button type="button" onClick={() => void download(request)} aria-label={`Download the ${label}`}>
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
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** What became of the last request from a form: the new request, or why it was refused. */
export type Outcome = { error: boolean; text: string };

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
