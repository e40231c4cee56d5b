import fs from "node:fs";
import path from "node:path";
import type { Sequelize } from "sequelize";
import { ArchiveWriter, readBackArchive, writeManifest, manifestPathOf } from "../../platform/files/archive-writer";
import { newId } from "../../platform/common/ids";
import type { RetentionConfig } from "../../platform/config/config";
import type { AuditService, AuditUser } from "../log";
import type { ArchiveStore } from "./archive-store";
import type { ArchiveManifest, RetentionRepository } from "./retention.repository";
import { keepUntil, monthEnd, monthLabel, tierResolver, type RetentionSettings, type Tier } from "./retention-tiers";
import { checkpointText, signNote, type NoteSigner } from "./signed-note";

/** Events read from the database per round trip while archiving. */
const ARCHIVE_BATCH = 5000;

export type MovedMonth = { month: string; rows: number; archives: { tier: Tier; rows: number; sha256: string }[] };

/**
 * Retention's middle steps for one detached month: its archives written, stored and read back
 * ("written"), then committed with the month's signed checkpoint ("archived"). Detaching before and
 * dropping after are the run's (retention.service.ts).
 */
export class MonthArchiver {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: RetentionRepository,
    private readonly audit: AuditService,
    private readonly store: ArchiveStore,
    private readonly signer: () => Promise<NoteSigner>,
    private readonly config: RetentionConfig,
    /** Where a run may be interrupted on purpose (tests): after each step. */
    private readonly afterStep: (step: "written" | "archived", month: string) => void | Promise<void>,
  ) {}

  /**
   * Writes a detached month as one compressed JSONL file per tier (lines in chain order), reads each back
   * from the store and checks it against its manifest, then commits the manifests, the month's signed
   * checkpoint and its audit events with the `archived` state. Run again after a crash, it writes the
   * same files again: nothing is committed until every file verified.
   */
  async archive(month: Date, tableName: string, settings: RetentionSettings, user: AuditUser | null = null): Promise<MovedMonth> {
    const label = monthLabel(month);
    const tierOf = tierResolver(settings);
    const range = { from: month, before: monthEnd(month) };
    const expected = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.rows;
    type Part = {
      writer: ArchiveWriter;
      file: string;
      rows: number;
      first: { seq: string; at: string } | null;
      last: { seq: string; at: string } | null;
    };
    const parts = new Map<Tier, Part>();
    let head: { seq: string; hash: string } | null = null;
    await fs.promises.mkdir(this.config.stagingDir, { recursive: true, mode: 0o700 });
    try {
      for (let after = "0"; ;) {
        const lines = await this.repository.monthLines(tableName, range, after, ARCHIVE_BATCH);
        for (const line of lines) {
          const tier = tierOf(line.eventType);
          let part = parts.get(tier);
          if (!part) {
            const file = path.join(this.config.stagingDir, `audit-${label}-${tier}.jsonl.gz`);
            part = { writer: await ArchiveWriter.create(file), file, rows: 0, first: null, last: null };
            parts.set(tier, part);
          }
          await part.writer.write(`${line.line}\n`, 1);
          part.rows += 1;
          part.first ??= { seq: line.seq, at: line.occurredAt };
          part.last = { seq: line.seq, at: line.occurredAt };
          head = { seq: line.seq, hash: line.hash };
        }
        if (lines.length < ARCHIVE_BATCH) break;
        after = lines[lines.length - 1].seq;
      }
    } catch (error) {
      for (const part of parts.values()) await part.writer.abort();
      throw error;
    }
    const archives: { id: string; tier: Tier; storageKey: string; manifest: ArchiveManifest; keepUntil: Date }[] = [];
    for (const [tier, part] of parts) {
      const summary = await part.writer.finish();
      const manifest: ArchiveManifest = {
        format: "finance-gateway-audit-archive/1",
        month: label,
        tier,
        rows: summary.rows,
        firstTimestamp: part.first?.at ?? null,
        lastTimestamp: part.last?.at ?? null,
        firstSeq: part.first?.seq ?? null,
        lastSeq: part.last?.seq ?? null,
        sha256: summary.dataSha256,
        fileSha256: summary.fileSha256,
        dataBytes: summary.dataBytes,
        fileBytes: summary.fileBytes,
        createdAt: new Date().toISOString(),
      };
      const storageKey = `${label.slice(0, 4)}/${label.slice(5, 7)}/audit-${label}-${tier}.jsonl.gz`;
      const manifestFile = await writeManifest(part.file, manifest);
      await this.store.put(storageKey, part.file);
      await this.store.put(manifestPathOf(storageKey), manifestFile);
      const stored = await readBackArchive(await this.store.open(storageKey));
      if (stored.dataSha256 !== manifest.sha256 || stored.fileSha256 !== manifest.fileSha256 || stored.lines !== manifest.rows)
        throw new Error(`archive ${storageKey} read back from ${this.store.where} does not match what was written`);
      archives.push({ id: newId(), tier, storageKey, manifest, keepUntil: keepUntil(month, tier) });
    }
    const total = archives.reduce((sum, archive) => sum + archive.manifest.rows, 0);
    if (expected !== null && expected !== undefined && Number(expected) !== total)
      throw new Error(`month ${label} held ${expected} events but ${total} were archived`);
    await this.afterStep("written", label);
    const checkpoint = head ? await this.signCheckpoint(head) : null;
    await this.sequelize.transaction(async (transaction) => {
      await this.repository.recordArchived(month, archives, checkpoint, transaction);
      await this.audit.record(transaction, {
        type: "audit.archive.created",
        user,
        action: "archive",
        resource: { type: "audit-month", id: label },
        changes: Object.fromEntries(archives.map((archive) => [archive.tier, { old: null, new: archive.manifest }])),
      });
      if (checkpoint)
        await this.audit.record(transaction, {
          type: "audit.checkpoint.signed",
          user,
          action: "sign",
          resource: { type: "audit-checkpoint", id: checkpoint.treeSize, label },
          changes: { checkpoint: { old: null, new: checkpoint.note } },
        });
    });
    if (checkpoint && this.config.checkpointFile) await publishCheckpoint(this.config.checkpointFile, checkpoint.note);
    await this.afterStep("archived", label);
    return {
      month: label,
      rows: total,
      archives: archives.map((archive) => ({ tier: archive.tier, rows: archive.manifest.rows, sha256: archive.manifest.sha256 })),
    };
  }

  private async signCheckpoint(head: { seq: string; hash: string }) {
    const signer = await this.signer();
    const rootHash = Buffer.from(head.hash, "hex");
    const note = signNote(checkpointText({ origin: signer.name, treeSize: BigInt(head.seq), rootHash }), signer);
    return { treeSize: head.seq, rootHash, note };
  }
}

/** Publishes the newest checkpoint as a file (written whole, then renamed), for copying off the host. */
async function publishCheckpoint(file: string, note: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  await fs.promises.writeFile(`${file}.partial`, note, { mode: 0o644 });
  await fs.promises.rename(`${file}.partial`, file);
}
