import type { RestRoute } from "./route";

/** The audit log. */
export const auditRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/audit-logs",
    operation: "listAuditLogs",
    summary: "Audit events, newest first (Bearer token of an admin or auditor; query keys are camelCase)",
    tag: "Audit logs",
    queryKeys: "camelCase",
    resultPath: ["auditEvents"],
    status: 200,
  },
];
