import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type { AuditEvent } from "../log";
import type { AuditEventFields } from "../log";
import type { ArchiveManifest } from "./retention.repository";

/** One archived event: the stored columns and its chain link (see ARCHIVE_LINE in the repository). */
export type ArchiveLine = AuditEventFields & {
  id: string;
  seq: string;
  occurredAt: string;
  prevHash: string | null;
  hash: string;
};

/** An archived event as live search shows an event (the same shape, so the same filter applies). */
export function eventOfLine(line: ArchiveLine): AuditEvent {
  return {
    id: line.id,
    seq: line.seq,
    timestamp: new Date(line.occurredAt),
    eventType: line.eventType,
    severity: line.severity,
    user: line.userId || line.userEmail ? { id: line.userId, email: line.userEmail ?? "" } : null,
    provider: line.provider,
    action: line.action,
    resource: line.resourceType ? { type: line.resourceType, id: line.resourceId ?? "", label: line.resourceLabel } : null,
    ipAddress: line.ipAddress,
    userAgent: line.userAgent,
    sessionId: line.sessionId,
    requestId: line.requestId,
    changes: line.changes,
    error: line.error,
    prevHash: line.prevHash,
    hash: line.hash,
  };
}

export class ArchiveMismatchError extends Error {}

/**
 * The lines of a stored archive, in order, in constant memory. Once the last line is read, the data's
 * SHA-256 and line count are checked against the manifest: a reader that reaches the end has read
 * exactly what was archived, or gets an ArchiveMismatchError.
 */
export async function* readArchiveLines(stream: Readable, manifest: ArchiveManifest): AsyncGenerator<string> {
  const hash = createHash("sha256");
  let count = 0;
  const gunzip = stream.pipe(createGunzip());
  stream.on("error", (error) => gunzip.destroy(error));
  const lines = createInterface({ input: gunzip, crlfDelay: Infinity });
  for await (const line of lines) {
    hash.update(`${line}\n`, "utf8");
    count += 1;
    yield line;
  }
  const sha256 = hash.digest("hex");
  if (count !== manifest.rows || sha256 !== manifest.sha256)
    throw new ArchiveMismatchError(
      `archive ${manifest.month} ${manifest.tier} does not match its manifest (${count} lines of ${manifest.rows}, SHA-256 ${sha256.slice(0, 12)}… of ${manifest.sha256.slice(0, 12)}…)`,
    );
}
