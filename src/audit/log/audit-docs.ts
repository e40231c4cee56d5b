import path from "node:path";
import { projectRoot } from "../../platform/config/project-root";
import { AUDIT_EVENT_CATALOGUE, AUDIT_EVENT_TYPES } from "./audit.catalogue";

/** docs/audit-events.md: its table of event types is generated from the catalogue (`npm run contracts`). */
export const AUDIT_EVENTS_DOC = path.join(projectRoot, "docs", "audit-events.md");
const BEGIN = "<!-- generated from src/audit/log/audit.catalogue.ts by `npm run contracts`: do not edit by hand -->";
const END = "<!-- end of generated table -->";

export function renderAuditEventTable(): string {
  const rows = AUDIT_EVENT_TYPES.map((type) => {
    const { severity, meaning } = AUDIT_EVENT_CATALOGUE[type];
    return `| \`${type}\` | ${severity} | ${meaning} |`;
  });
  return [BEGIN, "", "| Event type | Default severity | Recorded when |", "| --- | --- | --- |", ...rows, "", END].join("\n");
}

/** The document with its table replaced by the catalogue's current one. */
export function renderAuditEventsDoc(current: string): string {
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${AUDIT_EVENTS_DOC} lacks the generated-table markers`);
  return current.slice(0, start) + renderAuditEventTable() + current.slice(end + END.length);
}
