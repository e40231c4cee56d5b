import { DomainError, ErrorCode } from "../../platform/common/errors";

/** What a tampering error names: an archive (its id, month, tier and key), or a month's checkpoint (id, tier and key null). */
export type TamperedThing = { id: string | null; month: string; tier: string | null; storageKey: string | null };
/** How an archive differs from what was archived. */
export type TamperKind =
  /** The data file is not in the store. */
  | "missing"
  /** The manifest file beside it is missing or differs from the manifest recorded when the month was archived. */
  | "manifest"
  /** The file's bytes differ from its manifest: a line altered, the gzip corrupt or cut short, a file from elsewhere. */
  | "altered"
  /** The month's signed checkpoint does not verify, or does not match the archive. */
  | "checkpoint";

/** Where an archive goes wrong: the first bad event when it could be named, else the first bad bytes. */
export type TamperFinding = {
  kind: TamperKind;
  /** What is wrong, in a sentence that names the archive. */
  message: string;
  seq: string | null;
  eventId: string | null;
  /** 1-based line of the uncompressed data, when known. */
  line: number | null;
  /** Byte range of the stored (compressed) file, `from-to`, when the fault lies in its bytes. */
  bytes: string | null;
};

/**
 * An archive that is not what was archived. A domain error (409 `archive_tampered`, GraphQL
 * `CONFLICT`) that names the archive and the first bad event or byte range in its message and
 * `details`; verification reports the same finding as a broken chain instead.
 */
export class ArchiveTamperedError extends DomainError {
  readonly code = ErrorCode.Conflict;
  readonly restError = "archive_tampered";

  constructor(
    readonly archive: TamperedThing,
    readonly finding: TamperFinding,
  ) {
    super(finding.message, {
      details: {
        archive: { id: archive.id, month: archive.month, tier: archive.tier, storageKey: archive.storageKey },
        kind: finding.kind,
        seq: finding.seq,
        eventId: finding.eventId,
        line: finding.line,
        bytes: finding.bytes,
      },
    });
  }
}

/** A request that would read more archive data than one request may (AUDIT_ARCHIVE_REQUEST_BYTES). */
export class ArchiveBudgetError extends DomainError {
  readonly code = ErrorCode.BadRequest;
  readonly restError = "archive_read_budget_exceeded";
}

/**
 * The archive bytes (uncompressed, as manifests count them) one request may read, shared by every field
 * of the request: the same archive asked for twice, or through 30 aliases, is charged each time it is read.
 */
export class ReadBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get spent(): number {
    return this.used;
  }

  /** Charges `bytes` for `what`, or refuses before anything is read. */
  charge(bytes: number, what: string): void {
    if (this.used + bytes > this.limit)
      throw new ArchiveBudgetError(
        `${what} would read ${formatBytes(bytes)} of archives` +
          (this.used ? ` after ${formatBytes(this.used)} already read by this request` : "") +
          `; one request may read at most ${formatBytes(this.limit)} (AUDIT_ARCHIVE_REQUEST_BYTES). ` +
          "Choose fewer archives, or verify the whole chain with the CLI (`finance-gateway audit verify`).",
        { details: { requestedBytes: bytes, alreadyRead: this.used, limit: this.limit } },
      );
    this.used += bytes;
  }
}

/** No limit: the CLI's `audit verify` and the retention job read whatever they must. */
export const UNLIMITED = (): ReadBudget => new ReadBudget(Number.MAX_SAFE_INTEGER);

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
