import path from "node:path";
import { replaceGeneratedSection, type GeneratedSection } from "../../platform/common/generated-section";
import { projectRoot } from "../../platform/config/project-root";
import { AUDIT_EVENT_CATALOGUE, AUDIT_EVENT_TYPES } from "./audit.catalogue";

/** docs/audit-events.md: its table of event types is generated from the catalogue (`npm run contracts`). */
export const AUDIT_EVENTS_DOC = path.join(projectRoot, "docs", "audit-events.md");
const SECTION: GeneratedSection = {
  file: AUDIT_EVENTS_DOC,
  begin: "<!-- generated from src/audit/log/audit.catalogue.ts by `npm run contracts`: do not edit by hand -->",
  end: "<!-- end of generated table -->",
};

export function renderAuditEventTable(): string {
  const rows = AUDIT_EVENT_TYPES.map((type) => {
    const { severity, meaning } = AUDIT_EVENT_CATALOGUE[type];
    return `| \`${type}\` | ${severity} | ${meaning} |`;
  });
  return [SECTION.begin, "", "| Event type | Default severity | Recorded when |", "| --- | --- | --- |", ...rows, "", SECTION.end].join(
    "\n",
  );
}

/** The document with its table replaced by the catalogue's current one. */
export function renderAuditEventsDoc(current: string): string {
  return replaceGeneratedSection(current, SECTION, renderAuditEventTable());
}
