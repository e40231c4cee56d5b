import type { ConsolePage } from "./page";
import { alertsPage } from "../pages/alerts/alerts.route";
import { archivesPage } from "../pages/archives/archives.route";
import { auditLogsPage } from "../pages/audit-logs/audit-logs.route";
import { exportsPage } from "../pages/exports/exports.route";
import { reportsPage } from "../pages/reports/reports.route";
import { ssoProvidersPage } from "../pages/sso-providers/sso-providers.route";
import { streamingPage } from "../pages/streaming/streaming.route";
import { twoFactorPage } from "../pages/two-factor/two-factor.route";
import { usersPage } from "../pages/users/users.route";

/**
 * Every page of the console, in navigation order. Adding a page is one route module (a ConsolePage)
 * plus one entry here; a page exists only when the API it drives does.
 */
export const PAGES: ConsolePage[] = [
  auditLogsPage,
  alertsPage,
  streamingPage,
  exportsPage,
  reportsPage,
  archivesPage,
  ssoProvidersPage,
  usersPage,
  twoFactorPage,
];
