import { createHash } from "node:crypto";
import { BadRequestError } from "../../platform/common/errors";
import { parseFilter } from "../log";
import type { AuditQuery } from "../log";
import { GROUP_KEYS, type GroupKey, type ReportEventRow, type ReportRepository } from "./report.repository";

export const REPORT_TEMPLATES = ["authentication", "user_activity", "access_audit", "custom"] as const;
export type ReportTemplate = (typeof REPORT_TEMPLATES)[number];

/** Columns a custom report may list, each rendered from an event row. */
export const REPORT_COLUMNS = {
  timestamp: (row: ReportEventRow) => row.timestamp,
  eventType: (row: ReportEventRow) => row.eventType,
  severity: (row: ReportEventRow) => row.severity,
  user: (row: ReportEventRow) => row.userEmail,
  provider: (row: ReportEventRow) => row.provider,
  action: (row: ReportEventRow) => row.action,
  resource: (row: ReportEventRow) => resourceOf(row),
  ipAddress: (row: ReportEventRow) => row.ipAddress,
  userAgent: (row: ReportEventRow) => row.userAgent,
  sessionId: (row: ReportEventRow) => row.sessionId,
  requestId: (row: ReportEventRow) => row.requestId,
  changes: (row: ReportEventRow) => changesOf(row),
  error: (row: ReportEventRow) => row.error,
} as const;
export type ReportColumn = keyof typeof REPORT_COLUMNS;

/** Report parameters as validated and stored with the request. */
export type ReportParams = {
  template: ReportTemplate;
  from: string;
  to: string;
  userIds: string[];
  providers: string[];
  /** Custom reports only. */
  eventTypes: string[];
  groupBy: GroupKey | null;
  columns: ReportColumn[];
};

export type Control = { framework: string; id: string; title: string };
export type Cell = string | number | null;
export type ReportTable = { title: string; columns: string[]; rows: Cell[][]; total: number; note: string | null };

export type Report = {
  title: string;
  template: ReportTemplate;
  controls: Control[];
  period: { from: string; to: string };
  filters: { userIds: string[]; providers: string[]; eventTypes: string[]; groupBy: GroupKey | null; columns: ReportColumn[] };
  generatedAt: string;
  generatedBy: string;
  /** Every event the report covers, and how many per day (the chart). */
  totalEvents: number;
  eventsPerDay: Array<{ day: string; count: number }>;
  tables: ReportTable[];
  /** Hex SHA-256 of this report's content (all of the above, as JSON, without the checksum itself). */
  checksum: string;
};

const CONTROLS: Record<Exclude<ReportTemplate, "custom">, Control[]> = {
  authentication: [
    { framework: "SOC 2", id: "CC6.1", title: "Logical access security: authentication of users" },
    { framework: "SOC 2", id: "CC6.2", title: "Registration and authorization of users; credentials issued and removed" },
    { framework: "SOC 2", id: "CC6.3", title: "Access granted, changed and removed on the basis of roles" },
    { framework: "SOC 2", id: "CC7.2", title: "Monitoring of system components for anomalies (failed sign-ins)" },
  ],
  user_activity: [
    { framework: "HIPAA", id: "§164.312(b)", title: "Audit controls: record and examine activity in information systems" },
    {
      framework: "HIPAA",
      id: "§164.308(a)(1)(ii)(D)",
      title: "Information system activity review: regular review of audit logs and access reports",
    },
  ],
  access_audit: [
    {
      framework: "ISO/IEC 27001:2022",
      id: "A.8.15",
      title: "Logging: activities, exceptions and other events are recorded, protected and analysed",
    },
  ],
};

const TITLES: Record<ReportTemplate, string> = {
  authentication: "Authentication activity report",
  user_activity: "Per-user activity report",
  access_audit: "Access audit report",
  custom: "Custom audit report",
};

const TOP = 10;

/** Checks a report request; anything unknown or malformed is a 400 naming it. */
export function parseReportParams(input: {
  template: string;
  from?: string | null;
  to?: string | null;
  userIds?: string[] | null;
  providers?: string[] | null;
  eventTypes?: string[] | null;
  groupBy?: string | null;
  columns?: string[] | null;
}): ReportParams {
  if (!(REPORT_TEMPLATES as readonly string[]).includes(input.template)) {
    throw new BadRequestError(`template must be one of ${REPORT_TEMPLATES.join(", ")}`);
  }
  const template = input.template as ReportTemplate;
  if (!input.from || !input.to) throw new BadRequestError("A report needs a period: from and to");
  const custom = template === "custom";
  if (!custom && (input.eventTypes?.length || input.groupBy || input.columns?.length)) {
    throw new BadRequestError("eventTypes, groupBy and columns are for custom reports only");
  }
  const groupBy = input.groupBy ?? (custom ? "eventType" : null);
  if (groupBy !== null && !Object.prototype.hasOwnProperty.call(GROUP_KEYS, groupBy)) {
    throw new BadRequestError(`groupBy must be one of ${Object.keys(GROUP_KEYS).join(", ")}`);
  }
  const columns = input.columns?.length ? input.columns : custom ? ["timestamp", "eventType", "user", "ipAddress"] : [];
  for (const column of columns) {
    if (!Object.prototype.hasOwnProperty.call(REPORT_COLUMNS, column)) {
      throw new BadRequestError(`column ${JSON.stringify(column)} is not one of ${Object.keys(REPORT_COLUMNS).join(", ")}`);
    }
  }
  const params: ReportParams = {
    template,
    from: input.from,
    to: input.to,
    userIds: input.userIds ?? [],
    providers: input.providers ?? [],
    eventTypes: input.eventTypes ?? [],
    groupBy: groupBy as GroupKey | null,
    columns: columns as ReportColumn[],
  };
  const query = queryOf(params);
  if (query.from && query.before && query.from >= query.before) throw new BadRequestError("from must be before to");
  return params;
}

/** The audit search filter of a report's parameters, narrowed to `eventTypes`. */
function queryOf(params: ReportParams, eventTypes: string[] = params.eventTypes): AuditQuery {
  return parseFilter({ from: params.from, to: params.to, userIds: params.userIds, providers: params.providers, eventTypes });
}

/** Reads what a report says from the log. Totals count every event; listed rows stop at `maxRows`, and the table says so. */
export async function buildReport(
  repository: ReportRepository,
  params: ReportParams,
  meta: { generatedBy: string; generatedAt: Date; maxRows: number },
): Promise<Report> {
  const scopeTypes = {
    authentication: ["auth.*"],
    user_activity: [],
    access_audit: ["user.*", "provider.*", "account.*"],
    custom: params.eventTypes,
  }[params.template];
  const scope = queryOf(params, scopeTypes);
  const perDay = await repository.groupCount(scope, "day", { byKey: true });
  const tables = await TABLES[params.template](repository, params, meta.maxRows);
  const body = {
    title: TITLES[params.template],
    template: params.template,
    controls: params.template === "custom" ? [] : CONTROLS[params.template],
    period: { from: params.from, to: params.to },
    filters: {
      userIds: params.userIds,
      providers: params.providers,
      eventTypes: params.eventTypes,
      groupBy: params.groupBy,
      columns: params.columns,
    },
    generatedAt: meta.generatedAt.toISOString(),
    generatedBy: meta.generatedBy,
    totalEvents: perDay.reduce((sum, day) => sum + day.count, 0),
    eventsPerDay: perDay.map((day) => ({ day: day.key, count: day.count })),
    tables,
  };
  return { ...body, checksum: createHash("sha256").update(JSON.stringify(body)).digest("hex") };
}

type TableBuilder = (repository: ReportRepository, params: ReportParams, maxRows: number) => Promise<ReportTable[]>;

const TABLES: Record<ReportTemplate, TableBuilder> = {
  async authentication(repository, params, maxRows) {
    const success = queryOf(params, ["auth.login.success"]);
    const failed = queryOf(params, ["auth.login.failed"]);
    const [successByProvider, failedByProvider, reasons, addresses, accounts, tokens] = await Promise.all([
      repository.groupCount(success, "provider", { byKey: true }),
      repository.groupCount(failed, "provider", { byKey: true }),
      repository.groupCount(failed, "reason", { limit: maxRows }),
      repository.groupCount(failed, "ipAddress", { limit: TOP }),
      repository.groupCount(failed, "user", { limit: TOP }),
      repository.groupCount(
        queryOf(params, ["auth.token.issued", "auth.token.refreshed", "auth.token.revoked", "auth.session.expired", "auth.logout"]),
        "eventType",
        { byKey: true },
      ),
    ]);
    const providers = [...new Set([...successByProvider, ...failedByProvider].map((row) => row.key))].sort();
    const countOf = (rows: { key: string; count: number }[], key: string) => rows.find((row) => row.key === key)?.count ?? 0;
    const outcomeRows: Cell[][] = providers.map((provider) => [
      provider,
      countOf(successByProvider, provider),
      countOf(failedByProvider, provider),
    ]);
    const sum = (rows: { count: number }[]) => rows.reduce((total, row) => total + row.count, 0);
    outcomeRows.push(["All providers", sum(successByProvider), sum(failedByProvider)]);
    return [
      table("Sign-ins by outcome and provider", ["Provider", "Successful", "Failed"], outcomeRows),
      table(
        "Failed sign-ins by reason",
        ["Reason", "Failures"],
        reasons.map((row) => [row.key, row.count]),
        totalOf(reasons),
      ),
      table(
        `Top ${TOP} failing IP addresses`,
        ["IP address", "Failures"],
        addresses.map((row) => [row.key, row.count]),
      ),
      table(
        `Top ${TOP} failing accounts`,
        ["Account", "Failures"],
        accounts.map((row) => [row.key, row.count]),
      ),
      table(
        "Tokens and sessions",
        ["Event", "Count"],
        tokens.map((row) => [row.key, row.count]),
      ),
    ];
  },

  async user_activity(repository, params, maxRows) {
    const scope = queryOf(params, []);
    const roleChanges = { ...queryOf({ ...params, userIds: [] }, ["user.roles.*"]) };
    const [summary, events, total, roles] = await Promise.all([
      repository.perUser(scope, maxRows),
      repository.events(scope, maxRows, { byUser: true }),
      repository.count(scope),
      repository.events(roleChanges, maxRows, { subjectUserIds: params.userIds }),
    ]);
    return [
      table(
        "Activity by user",
        ["User", "Events", "First", "Last", "IP addresses"],
        summary.map((row) => [row.email, row.events, row.first, row.last, row.addresses]),
        totalOf(summary),
      ),
      table("Role changes", ["Time", "User", "Change", "By"], roles.map(roleChangeRow), totalOf(roles)),
      table(
        "Activity, by user in time order",
        ["Time", "User", "Event", "IP address", "Resource", "Error"],
        events.map((row) => [row.timestamp, row.userEmail, row.eventType, row.ipAddress, resourceOf(row), row.error]),
        total,
      ),
    ];
  },

  async access_audit(repository, params, maxRows) {
    const aboutUsers = { subjectUserIds: params.userIds };
    const everyone = { ...params, userIds: [] };
    const [roles, providers, lifecycle, afterSuspension] = await Promise.all([
      repository.events(queryOf(everyone, ["user.roles.*"]), maxRows, aboutUsers),
      repository.events(
        queryOf(params, ["provider.created", "provider.updated", "provider.deleted", "provider.enabled", "provider.disabled"]),
        maxRows,
      ),
      repository.events(queryOf(everyone, ["user.suspended", "user.reactivated", "user.deleted"]), maxRows, aboutUsers),
      repository.activityAfterSuspension(queryOf(params, []), maxRows),
    ]);
    return [
      table("Role changes", ["Time", "User", "Change", "By"], roles.map(roleChangeRow), totalOf(roles)),
      table(
        "Provider configuration changes",
        ["Time", "Provider", "Event", "By", "Changes"],
        providers.map((row) => [row.timestamp, row.resourceLabel ?? row.provider, row.eventType, row.userEmail, changesOf(row)]),
        totalOf(providers),
      ),
      table(
        "Suspensions, reactivations and deletions",
        ["Time", "User", "Event", "By"],
        lifecycle.map((row) => [row.timestamp, row.resourceLabel, row.eventType, row.userEmail]),
        totalOf(lifecycle),
      ),
      table(
        "FLAGGED: activity after suspension",
        ["Time", "User", "Event", "IP address", "Suspended at"],
        afterSuspension.map((row) => [row.timestamp, row.userEmail, row.eventType, row.ipAddress, row.suspendedAt]),
        totalOf(afterSuspension),
      ),
    ];
  },

  async custom(repository, params, maxRows) {
    const scope = queryOf(params);
    const groupBy = params.groupBy ?? "eventType";
    const [groups, events, total] = await Promise.all([
      repository.groupCount(scope, groupBy, { byKey: groupBy === "day", limit: maxRows }),
      repository.events(scope, maxRows),
      repository.count(scope),
    ]);
    return [
      table(
        `Events by ${groupBy}`,
        [groupBy, "Events"],
        groups.map((row) => [row.key, row.count]),
        totalOf(groups),
      ),
      table(
        "Events",
        params.columns,
        events.map((row) => params.columns.map((column) => REPORT_COLUMNS[column](row))),
        total,
      ),
    ];
  },
};

/** The rows a limited query had before its limit (every row carries it; none: none). */
function totalOf(rows: Array<{ total: number }>): number {
  return rows[0]?.total ?? 0;
}

function table(title: string, columns: string[], rows: Cell[][], total = rows.length): ReportTable {
  const note = total > rows.length ? `Lists the first ${rows.length} of ${total} rows; the export of the same period has them all.` : null;
  return { title, columns, rows, total, note };
}

function roleChangeRow(row: ReportEventRow): Cell[] {
  const role = row.changes?.role;
  const change = role ? `${String(role.old ?? "(none)")} -> ${String(role.new ?? "(none)")}` : changesOf(row);
  return [
    row.timestamp,
    row.resourceLabel,
    change,
    row.eventType === "user.roles.synced" ? `${row.provider ?? "IdP"} (sync)` : row.userEmail,
  ];
}

function resourceOf(row: ReportEventRow): string | null {
  return row.resourceType ? `${row.resourceType}:${row.resourceLabel ?? row.resourceId ?? ""}` : null;
}

function changesOf(row: ReportEventRow): string | null {
  if (!row.changes) return null;
  return Object.entries(row.changes)
    .map(([field, change]) => `${field}: ${JSON.stringify(change?.old ?? null)} -> ${JSON.stringify(change?.new ?? null)}`)
    .join("; ");
}
