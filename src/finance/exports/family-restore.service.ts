import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Sequelize, Transaction } from "sequelize";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import type { AuditService } from "../../audit/log";
import { ConflictError, ValidationError } from "../../platform/common/errors";
import { newId } from "../../platform/common/ids";
import type { Requester } from "../../platform/security/actor";
import type { AccountRepository } from "../accounts";
import type { LedgerService } from "../ledger";
import type { TradeService } from "../investments";
import type { ManifestFile } from "./family-export.writer";
import {
  accountOf,
  categoryOf,
  merchantOf,
  RecordProblem,
  tagOf,
  tradeOf,
  transactionOf,
  transferOf,
  valuationOf,
} from "./family-restore.records";
import type {
  FamilyRestoreRepository,
  RestoredSecurity,
  RestoredTrade,
  RestoredTransaction,
  RestoredValuation,
} from "./family-restore.repository";

/** Rows written per statement. */
const BATCH = 1000;
/** A zip holds upstream's nine files and the manifest; more entries than this is not an export. */
const MAX_ENTRIES = 32;
const MANIFEST_MAX_BYTES = 1024 * 1024;
/** A line of all.ndjson longer than this is refused (a record is a few hundred bytes). */
const MAX_LINE_BYTES = 1024 * 1024;
/** The record types a restore writes; the others of the file (Rule) are read past. */
const SKIPPED_TYPES = new Set(["Rule", "Holding", "Budget", "BudgetCategory", "RecurringTransaction"]);

export type RestoreSummary = { familyId: string; counts: Record<string, number> };
export type RestoreTarget = Requester & { familyId: string };

/**
 * Loads a family export (docs/exports.md) into an empty family: the manifest's SHA-256 and size of every
 * file are checked first, then all.ndjson is read line by line (never whole) and written in one
 * transaction, each record validated, every id replaced by a new one, a reference to a record the file
 * does not hold refused. The ledger then derives every restored account's balances from the restored
 * entries, as after any write.
 */
export class FamilyRestoreService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: FamilyRestoreRepository,
    private readonly accounts: AccountRepository,
    private readonly ledger: LedgerService,
    private readonly trades: TradeService,
    private readonly audit: AuditService,
  ) {}

  async restore(target: RestoreTarget, zipPath: string): Promise<RestoreSummary> {
    const zip = await openZip(zipPath);
    try {
      const entries = await entriesOf(zip);
      const manifest = await readManifest(zip, entries);
      for (const file of manifest) await verify(zip, entries.get(file.name)!, file);
      return await this.sequelize.transaction(async (transaction) => {
        await this.repository.lockFamily(target.familyId, transaction);
        if (await this.repository.holdsData(target.familyId, transaction))
          throw new ConflictError(
            "The family already holds finance data; a restore needs an empty family (DELETE /users/reset empties it)",
          );
        const counts = await this.load(target.familyId, await openEntry(zip, entries.get("all.ndjson")!), transaction);
        await this.audit.record(transaction, {
          type: "family.restored",
          actor: target,
          action: "restore",
          resource: { type: "family", id: target.familyId, label: "family export restored" },
          changes: Object.fromEntries(Object.entries(counts).map(([type, count]) => [type, { old: null, new: count }])),
        });
        return { familyId: target.familyId, counts };
      });
    } finally {
      zip.close();
    }
  }

  /** Writes the records of all.ndjson, in the file's order (what a record refers to comes first). */
  private async load(familyId: string, input: Readable, transaction: Transaction): Promise<Record<string, number>> {
    const ids = { Account: new Map<string, string>(), Category: new Map<string, string>(), Tag: new Map<string, string>() };
    const merchants = new Map<string, string>();
    const transactionIds = new Map<string, string>();
    const counts: Record<string, number> = {};
    const parents: { id: string; parent_id: string }[] = [];
    const pending = new PendingBatches(this.repository, familyId, transaction);
    const map = (table: Map<string, string>, old: string | null, what: string) => {
      if (old === null) return null;
      const found = table.get(old);
      if (!found) throw new RecordProblem(`refers to a ${what} the file does not hold (${old})`);
      return found;
    };
    let lineNumber = 0;
    const lines = createInterface({ input, crlfDelay: Infinity });
    for await (const line of lines) {
      lineNumber += 1;
      if (line.length === 0) continue;
      try {
        if (Buffer.byteLength(line) > MAX_LINE_BYTES) throw new RecordProblem(`is longer than ${MAX_LINE_BYTES} bytes`);
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          throw new RecordProblem("is not JSON");
        }
        if (typeof parsed !== "object" || parsed === null || typeof (parsed as { type?: unknown }).type !== "string")
          throw new RecordProblem("has no type");
        const { type, data } = parsed as { type: string; data?: unknown };
        if (SKIPPED_TYPES.has(type)) continue;
        if (typeof data !== "object" || data === null || Array.isArray(data)) throw new RecordProblem("has no data object");
        const record = data as Record<string, unknown>;
        await pending.switchTo(type);
        counts[type] = (counts[type] ?? 0) + 1;
        switch (type) {
          case "Account": {
            const row = accountOf(record);
            ids.Account.set(row.id, newId());
            await pending.add({ ...row, id: ids.Account.get(row.id)! });
            break;
          }
          case "Category": {
            const row = categoryOf(record);
            ids.Category.set(row.id, newId());
            if (row.parent_id) parents.push({ id: ids.Category.get(row.id)!, parent_id: row.parent_id });
            await pending.add({ ...row, id: ids.Category.get(row.id)!, parent_id: null });
            break;
          }
          case "Tag": {
            const row = tagOf(record);
            ids.Tag.set(row.id, newId());
            await pending.add({ ...row, id: ids.Tag.get(row.id)! });
            break;
          }
          case "Merchant": {
            const row = merchantOf(record);
            merchants.set(row.id, newId());
            await pending.add({ ...row, id: merchants.get(row.id)! });
            break;
          }
          case "Valuation": {
            const row = valuationOf(record);
            await pending.add({
              ...row,
              id: newId(),
              account_id: map(ids.Account, row.account_id, "account")!,
            } satisfies RestoredValuation);
            break;
          }
          case "Transaction": {
            const row = transactionOf(record);
            const fresh = newId();
            transactionIds.set(row.id, fresh);
            await pending.add({
              ...row,
              id: fresh,
              account_id: map(ids.Account, row.account_id, "account")!,
              category_id: map(ids.Category, row.category_id, "category"),
              merchant_id: map(merchants, row.merchant_id, "merchant"),
              tag_ids: row.tag_ids.map((tag) => map(ids.Tag, tag, "tag")!),
            } satisfies RestoredTransaction);
            break;
          }
          case "Transfer": {
            const row = transferOf(record);
            await pending.add({
              id: newId(),
              outflow_transaction_id: map(transactionIds, row.outflow_transaction_id, "transaction")!,
              inflow_transaction_id: map(transactionIds, row.inflow_transaction_id, "transaction")!,
            });
            break;
          }
          case "Trade": {
            const { trade, security } = tradeOf(record);
            pending.security(security);
            await pending.add({
              ...trade,
              id: newId(),
              account_id: map(ids.Account, trade.account_id, "account")!,
              category_id: map(ids.Category, trade.category_id, "category"),
            } satisfies RestoredTrade);
            break;
          }
          default:
            throw new RecordProblem(`has an unknown type ${JSON.stringify(type.slice(0, 40))}`);
        }
      } catch (error) {
        if (error instanceof RecordProblem) throw new ValidationError([`all.ndjson line ${lineNumber} ${error.message}`]);
        throw error;
      }
    }
    await pending.flush();
    for (let at = 0; at < parents.length; at += BATCH) {
      const batch = parents.slice(at, at + BATCH).map((row) => {
        const parent = ids.Category.get(row.parent_id);
        if (!parent) throw new ValidationError([`all.ndjson: a category's parent ${row.parent_id} is not in the file`]);
        return { id: row.id, parent_id: parent };
      });
      await this.repository.setCategoryParents(familyId, batch, transaction);
    }
    await this.settle(familyId, [...ids.Account.values()], transaction);
    return counts;
  }

  /** Holdings from the restored trades, then every account's balances from its entries, as the ledger derives them after any write. */
  private async settle(familyId: string, accountIds: string[], transaction: Transaction): Promise<void> {
    if (accountIds.length === 0) return;
    const accounts = new Map(
      (await this.accounts.byIds(familyId, accountIds, transaction)).flatMap((account) => (account ? [[account.id, account]] : [])),
    );
    for (const { accountId, from } of await this.repository.tradeAccounts(familyId, transaction)) {
      await this.trades.rebuild(familyId, accounts.get(accountId)!, from, transaction);
    }
    await this.ledger.recomputeWhole(accountIds, transaction);
  }
}

/** Rows of the record type being read, written a batch at a time (and the securities trades name). */
class PendingBatches {
  private type: string | null = null;
  private rows: object[] = [];
  private readonly securities = new Map<string, RestoredSecurity>();
  private readonly order = ["Account", "Category", "Tag", "Merchant", "Valuation", "Transaction", "Transfer", "Trade"];
  private readonly seen = new Set<string>();

  constructor(
    private readonly repository: FamilyRestoreRepository,
    private readonly familyId: string,
    private readonly transaction: Transaction,
  ) {}

  /** The file's records come grouped by type in the order of `order`; a type seen again after another is out of place. */
  async switchTo(type: string): Promise<void> {
    if (type === this.type) return;
    if (!this.order.includes(type)) return;
    if (this.seen.has(type)) throw new RecordProblem(`is a ${type} after other record types: the file's records are out of order`);
    await this.flush();
    this.seen.add(type);
    this.type = type;
  }

  security(security: RestoredSecurity): void {
    if (!this.securities.has(security.key)) this.securities.set(security.key, security);
  }

  async add(row: object): Promise<void> {
    this.rows.push(row);
    if (this.rows.length >= BATCH) await this.flush();
  }

  async flush(): Promise<void> {
    const rows = this.rows;
    this.rows = [];
    if (rows.length === 0) return;
    const { repository, familyId, transaction } = this;
    switch (this.type) {
      case "Account":
        return repository.insertAccounts(familyId, rows as never, transaction);
      case "Category":
        return repository.insertCategories(familyId, rows as never, transaction);
      case "Tag":
        return repository.insertTags(familyId, rows as never, transaction);
      case "Merchant":
        return repository.insertMerchants(familyId, rows as never, transaction);
      case "Valuation":
        return repository.insertValuations(familyId, rows as never, transaction);
      case "Transaction":
        return repository.insertTransactions(familyId, rows as never, transaction);
      case "Transfer":
        return repository.insertTransfers(familyId, rows as never, transaction);
      case "Trade": {
        const fresh = [...this.securities.values()].map((security) => ({ ...security, id: newId() }));
        this.securities.clear();
        await repository.ensureSecurities(fresh, transaction);
        return repository.insertTrades(familyId, rows as never, transaction);
      }
    }
  }
}

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (error, zip) =>
      error ? reject(new ValidationError([`Not a zip file: ${error.message}`])) : resolve(zip),
    ),
  );
}

function entriesOf(zip: ZipFile): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    zip.on("entry", (entry: Entry) => {
      if (entries.size >= MAX_ENTRIES) return reject(new ValidationError([`A family export holds at most ${MAX_ENTRIES} files`]));
      if (entries.has(entry.fileName)) return reject(new ValidationError([`The zip holds ${entry.fileName} twice`]));
      entries.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on("end", () => resolve(entries));
    zip.on("error", (error: Error) => reject(new ValidationError([`The zip is damaged: ${error.message}`])));
    zip.readEntry();
  });
}

function openEntry(zip: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) =>
      error ? reject(new ValidationError([`${entry.fileName}: ${error.message}`])) : resolve(stream),
    ),
  );
}

/** manifest.json: present, small, and naming every other file of the zip (all.ndjson among them) with its SHA-256 and size. */
async function readManifest(zip: ZipFile, entries: Map<string, Entry>): Promise<ManifestFile[]> {
  const entry = entries.get("manifest.json");
  if (!entry) throw new ValidationError(["The zip has no manifest.json: not a family export"]);
  if (entry.uncompressedSize > MANIFEST_MAX_BYTES) throw new ValidationError(["manifest.json is too large"]);
  const chunks: Buffer[] = [];
  for await (const chunk of await openEntry(zip, entry)) chunks.push(chunk as Buffer);
  let manifest: unknown;
  try {
    manifest = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ValidationError(["manifest.json is not JSON"]);
  }
  const files = (manifest as { kind?: unknown; files?: unknown } | null)?.files;
  if ((manifest as { kind?: unknown }).kind !== "family-export" || !Array.isArray(files))
    throw new ValidationError(["manifest.json is not a family export's manifest"]);
  const listed = new Set<string>();
  for (const file of files as ManifestFile[]) {
    if (
      typeof file?.name !== "string" ||
      typeof file.sha256 !== "string" ||
      !/^[0-9a-f]{64}$/.test(file.sha256) ||
      !Number.isSafeInteger(file.bytes)
    )
      throw new ValidationError(["manifest.json lists a file without its name, SHA-256 and size"]);
    const inZip = entries.get(file.name);
    if (!inZip || file.name === "manifest.json")
      throw new ValidationError([`manifest.json lists ${file.name}, which the zip does not hold`]);
    if (inZip.uncompressedSize !== file.bytes) throw new ValidationError([`${file.name} is not the size manifest.json gives`]);
    listed.add(file.name);
  }
  for (const name of entries.keys())
    if (name !== "manifest.json" && !listed.has(name)) throw new ValidationError([`${name} is in the zip but not in manifest.json`]);
  if (!listed.has("all.ndjson")) throw new ValidationError(["The zip has no all.ndjson"]);
  return files as ManifestFile[];
}

/** Streams a file of the zip through SHA-256 (its size already checked against the manifest, and by yauzl against the zip). */
async function verify(zip: ZipFile, entry: Entry, file: ManifestFile): Promise<void> {
  const hash = createHash("sha256");
  try {
    for await (const chunk of await openEntry(zip, entry)) hash.update(chunk as Buffer);
  } catch (error) {
    // A damaged entry: bad deflate data, or more or fewer bytes than the zip says.
    throw error instanceof ValidationError ? error : new ValidationError([`${file.name} cannot be read: ${(error as Error).message}`]);
  }
  if (hash.digest("hex") !== file.sha256) throw new ValidationError([`${file.name} does not match its SHA-256 in manifest.json`]);
}
