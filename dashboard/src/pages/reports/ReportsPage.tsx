import { useMemo, useState, type FormEvent } from "react";
import { useMutation } from "urql";
import { dayEnd, dayStart, todayIn } from "../../app/time";
import { useZone } from "../../app/zone";
import {
  CreateAuditReportDocument,
  type AuditReportColumn,
  type AuditReportFormat,
  type AuditReportGroupBy,
  type AuditReportInput,
  type AuditReportTemplate,
} from "../../gql/graphql";
import { EventTypePicker } from "../audit-logs/EventTypePicker";
import { UserPicker } from "../audit-logs/FilterBar";
import { Field, problemOf, type Outcome } from "../../kit";
import { ExportRequests, SubmitRow } from "../exports/ExportRequests";

const TEMPLATES: Array<{ value: AuditReportTemplate; label: string; controls: string; shows: string }> = [
  {
    value: "AUTHENTICATION",
    label: "Authentication",
    controls: "SOC 2 CC6.1, CC6.2, CC6.3, CC7.2",
    shows: "sign-ins by outcome and provider, failures by reason, the top failing addresses and accounts, tokens and sessions",
  },
  {
    value: "USER_ACTIVITY",
    label: "Per-user activity",
    controls: "HIPAA §164.312(b), §164.308(a)(1)(ii)(D)",
    shows: "per user: events, first and last time, addresses, role changes, and everything they did, in order",
  },
  {
    value: "ACCESS_AUDIT",
    label: "Access audit",
    controls: "ISO/IEC 27001:2022 A.8.15",
    shows: "role changes, SSO provider changes, suspensions, reactivations and deletions, and activity after a suspension",
  },
  {
    value: "CUSTOM",
    label: "Custom",
    controls: "none",
    shows: "the event types you pick, counted by what you choose, listed with your columns",
  },
];
const FORMATS: AuditReportFormat[] = ["PDF", "CSV", "JSON"];
const GROUP_BY: Array<{ value: AuditReportGroupBy; label: string }> = [
  { value: "eventType", label: "Event type" },
  { value: "severity", label: "Severity" },
  { value: "user", label: "User" },
  { value: "provider", label: "Provider" },
  { value: "ipAddress", label: "IP address" },
  { value: "day", label: "Day" },
  { value: "reason", label: "Failure reason" },
];
const COLUMNS: AuditReportColumn[] = [
  "timestamp",
  "eventType",
  "severity",
  "user",
  "provider",
  "action",
  "resource",
  "ipAddress",
  "userAgent",
  "sessionId",
  "requestId",
  "changes",
  "error",
];
const DEFAULT_COLUMNS: AuditReportColumn[] = ["timestamp", "eventType", "user", "ipAddress"];

const splitList = (text: string) =>
  text
    .split(/[,\s]+/)
    .map((part) => part.trim())
    .filter(Boolean);

/** Last month's first and last day in the zone: the period auditors ask for most. */
function lastMonth(zone: string): { from: string; to: string } {
  const [year, month] = todayIn(zone).split("-").map(Number);
  const first = new Date(Date.UTC(year, month - 2, 1)).toISOString().slice(0, 10);
  const last = new Date(Date.UTC(year, month - 1, 0)).toISOString().slice(0, 10);
  return { from: first, to: last };
}

/**
 * The period as the API takes it: whole days in the viewer's zone. In UTC the days themselves (which
 * the report prints as such); elsewhere the instants the days begin and end.
 */
function period(from: string, to: string, zone: string): { from: string; to: string } {
  const start = dayStart(from, zone);
  const end = dayEnd(to, zone);
  const utc = start.getTime() === Date.parse(`${from}T00:00:00Z`) && end.getTime() === Date.parse(`${to}T23:59:59.999Z`);
  return utc ? { from, to } : { from: start.toISOString(), to: end.toISOString() };
}

/** Compliance reports: a template (or a custom one) over a period, some users and providers, as PDF, CSV or JSON. */
export function ReportsPage() {
  const { zone } = useZone();
  const initial = useMemo(() => lastMonth(zone), [zone]);
  const [template, setTemplate] = useState<AuditReportTemplate>("AUTHENTICATION");
  const [format, setFormat] = useState<AuditReportFormat>("PDF");
  const [from, setFrom] = useState(initial.from);
  const [to, setTo] = useState(initial.to);
  const [userIds, setUserIds] = useState<string[]>([]);
  const [userLabels, setUserLabels] = useState(new Map<string, string>());
  const [providers, setProviders] = useState("");
  const [eventTypes, setEventTypes] = useState<string[]>([]);
  const [groupBy, setGroupBy] = useState<AuditReportGroupBy>("eventType");
  const [columns, setColumns] = useState<AuditReportColumn[]>(DEFAULT_COLUMNS);
  const [{ fetching }, create] = useMutation(CreateAuditReportDocument);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [refresh, setRefresh] = useState(0);
  const chosen = TEMPLATES.find((candidate) => candidate.value === template)!;
  const custom = template === "CUSTOM";

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!from || !to) return setOutcome({ error: true, text: "Choose the first and the last day of the period." });
    const input: AuditReportInput = { template, format, ...period(from, to, zone) };
    if (userIds.length) input.userIds = userIds;
    if (splitList(providers).length) input.providers = splitList(providers);
    if (custom) Object.assign(input, { eventTypes: eventTypes.length ? eventTypes : null, groupBy, columns });
    const result = await create({ input });
    if (result.error || !result.data) {
      setOutcome({ error: true, text: result.error ? problemOf(result.error) : "The report was refused" });
      return;
    }
    setOutcome({ error: false, text: `${chosen.label} report (${format}) requested: it appears below and can be downloaded when ready.` });
    setRefresh((n) => n + 1);
  };

  return (
    <div className="reports-page">
      <h1>Reports</h1>
      <form className="panel-form report-form" aria-labelledby="new-report-title" onSubmit={(event) => void submit(event)}>
        <h2 id="new-report-title">New report</h2>
        <Field label="Template">
          <select
            value={template}
            onChange={(event) => setTemplate(event.target.value as AuditReportTemplate)}
            aria-describedby="template-hint"
          >
            {TEMPLATES.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
        </Field>
        <p id="template-hint" className="template-hint">
          <strong>Controls:</strong> {chosen.controls}. <strong>Shows:</strong> {chosen.shows}.
        </p>
        <Field label="From (day)">
          <input type="date" required value={from} onChange={(event) => setFrom(event.target.value)} />
        </Field>
        <Field label="To (day, inclusive)">
          <input type="date" required value={to} onChange={(event) => setTo(event.target.value)} />
        </Field>
        <p className="muted span-all">Days are whole days in {zone}.</p>
        <UserPicker
          selected={userIds}
          labels={userLabels}
          onChange={(ids, labels) => {
            setUserIds(ids);
            setUserLabels(labels);
          }}
        />
        <Field label="Providers (optional)">
          <input value={providers} onChange={(event) => setProviders(event.target.value)} placeholder="slug, slug" />
        </Field>
        {custom && (
          <>
            <EventTypePicker label="Event types (none chosen: all)" value={eventTypes} onChange={setEventTypes} />
            <Field label="Group by">
              <select value={groupBy} onChange={(event) => setGroupBy(event.target.value as AuditReportGroupBy)}>
                {GROUP_BY.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
            </Field>
            <fieldset className="span-all columns-choice">
              <legend>Columns</legend>
              {COLUMNS.map((column) => (
                <label key={column} className="check">
                  <input
                    type="checkbox"
                    checked={columns.includes(column)}
                    onChange={(event) =>
                      setColumns(
                        event.target.checked
                          ? COLUMNS.filter((c) => c === column || columns.includes(c))
                          : columns.filter((c) => c !== column),
                      )
                    }
                  />
                  {column}
                </label>
              ))}
            </fieldset>
          </>
        )}
        <fieldset>
          <legend>Format</legend>
          {FORMATS.map((choice) => (
            <label key={choice} className="check">
              <input type="radio" name="report-format" value={choice} checked={format === choice} onChange={() => setFormat(choice)} />
              {choice}
            </label>
          ))}
        </fieldset>
        <SubmitRow label="Create report" disabled={fetching || (custom && columns.length === 0)} outcome={outcome} />
      </form>
      <ExportRequests kind="REPORT" title="Your reports" refresh={refresh} />
    </div>
  );
}
