import type { Sequelize } from "sequelize";
import { BadRequestError, NotFoundError } from "../../platform/common/errors";
import { clampLimit, matchesFilter, parseFilter, type AuditFilterInput } from "../log";
import type { Requester } from "../../platform/security/actor";
import type { AuditEvent, AuditService } from "../log";
import { formatBytes, type ReadBudget } from "./archive-errors";
import { eventOfLine, type ArchiveLine } from "./archive-lines";
import type { ArchiveReader } from "./archive-reader";
import type { ArchiveRow, RetentionRepository } from "./retention.repository";

export type ArchiveSearchPage = { events: AuditEvent[]; hasMore: boolean; nextCursor: string | null; scanned: number };

/** Archives one search may name (after repeated ids are counted once). */
export const MAX_SEARCH_ARCHIVES = 100;

/**
 * Searches chosen archives with the filters of live search, streaming each file: archives in the order
 * given (an id given twice counts once), events in chain order within each. A page ends after `first`
 * matches; the cursor is the position reached, so the next page reads on from there. The archives the
 * page may read are charged to the request's budget (their manifests' sizes) before anything is read,
 * and each is checked whole before its first line is used: a tampered archive answers an
 * ArchiveTamperedError naming it.
 */
export async function searchArchives(
  deps: { sequelize: Sequelize; repository: RetentionRepository; audit: AuditService; reader: ArchiveReader },
  request: {
    archiveIds: string[];
    filter: AuditFilterInput | null | undefined;
    first?: number | null;
    after?: string | null;
    requester: Requester | null;
    budget: ReadBudget;
  },
): Promise<ArchiveSearchPage> {
  const ids = [...new Set(request.archiveIds)];
  if (ids.length === 0 || ids.length > MAX_SEARCH_ARCHIVES) throw new BadRequestError(`choose 1 to ${MAX_SEARCH_ARCHIVES} archives`);
  const match = matchesFilter(parseFilter(request.filter));
  const limit = clampLimit(request.first);
  const all = new Map((await deps.repository.archives()).map((archive) => [archive.id, archive]));
  const chosen = ids.map((id) => {
    const archive = all.get(id);
    if (!archive || archive.state !== "stored") throw new NotFoundError(`archive ${id} is not stored`);
    return archive;
  });
  const start = request.after ? decodeArchiveCursor(request.after, chosen.length) : { archive: 0, line: 0 };
  const reading = chosen.slice(start.archive);
  const bytes = reading.reduce((sum, archive) => sum + archiveBytes(archive), 0);
  request.budget.charge(bytes, `searching ${reading.length} archive${reading.length === 1 ? "" : "s"} (${formatBytes(bytes)})`);
  if (!request.after)
    await deps.sequelize.transaction((transaction) =>
      deps.audit.record(transaction, {
        type: "audit.archive.searched",
        actor: request.requester,
        action: "search",
        resource: {
          type: "audit-archive",
          id: chosen
            .map((archive) => archive.id)
            .join(",")
            .slice(0, 500),
        },
        changes: { filter: { old: null, new: (request.filter ?? {}) as Record<string, unknown> } },
      }),
    );
  const events: AuditEvent[] = [];
  let scanned = 0;
  for (let index = start.archive; index < chosen.length; index += 1) {
    let line = 0;
    for await (const text of deps.reader.lines(chosen[index])) {
      line += 1;
      if (index === start.archive && line <= start.line) continue;
      scanned += 1;
      const event = eventOfLine(JSON.parse(text) as ArchiveLine);
      if (!match(event)) continue;
      if (events.length === limit) return { events, hasMore: true, nextCursor: encodeArchiveCursor(index, line - 1), scanned };
      events.push(event);
    }
  }
  return { events, hasMore: false, nextCursor: null, scanned };
}

/** What reading an archive costs: its uncompressed size as its manifest records it. */
export function archiveBytes(archive: ArchiveRow): number {
  const bytes = Number(archive.manifest.dataBytes);
  return Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
}

function encodeArchiveCursor(archive: number, line: number): string {
  return Buffer.from(`${archive}:${line}`).toString("base64url");
}

function decodeArchiveCursor(cursor: string, archives: number): { archive: number; line: number } {
  const match = /^(\d{1,3}):(\d{1,12})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || Number(match[1]) >= archives) throw new BadRequestError("cursor is invalid");
  return { archive: Number(match[1]), line: Number(match[2]) };
}
