import type { ConsolePage } from "../../app/page";
import { AuditLogsPage } from "./AuditLogsPage";

export const auditLogsPage: ConsolePage = { path: "audit-logs", title: "Audit log", roles: ["admin", "auditor"], component: AuditLogsPage };
