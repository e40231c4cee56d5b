import type { Sequelize, Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import { NotFoundError, ValidationError } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import type { Actor } from "../../platform/security/actor";
import type { AccountRepository, AccountService } from "../accounts";
import type { TradeService } from "../investments";
import type { TransactionService } from "../transactions";
import { readCsv, type CsvLimits } from "./csv.reader";
import type { DateFormat, NumberFormat } from "./import.formats";
import type { ImportRepository, ImportRow, StoredImportRow } from "./import.repository";
import {
  columnPlan,
  columnsRead,
  DETECTION_SAMPLE,
  IMPORT_TYPES,
  importConfigOf,
  importKindOf,
  MAX_ACCOUNT_ROWS,
  type ImportKind,
  resolvedFormats,
  stageRow,
  type ImportConfig,
  type ImportSettingsInput,
  type StagedRow,
} from "./import.rows";

/** A file as it arrives (a multipart stream or a JSON string), with what the request says about it. */
export type ImportUpload = {
  content: AsyncIterable<Buffer | string> | Iterable<Buffer | string>;
  fileName: string | null;
  contentType: string | null;
  settings: ImportSettingsInput;
};

export type ImportProblem = { code: string; message: string };

/** What preflight found, and what publishing the file would write. */
export type ImportPreflight = {
  type: string;
  valid: boolean;
  content: { fileName: string; contentType: string; byteSize: number };
  rowsCount: number;
  validRowsCount: number;
  invalidRowsCount: number;
  /** Rows a publish would write now: the valid ones whose transaction the account does not hold yet. */
  importableCount: number;
  duplicateCount: number;
  headers: string[];
  requiredHeaders: string[];
  missingRequiredHeaders: string[];
  errors: ImportProblem[];
  warnings: string[];
  rowErrors: Array<{ rowNumber: number; problems: string[] }>;
  detected: {
    columnSeparator: string;
    dateFormat: DateFormat | null;
    numberFormat: NumberFormat | null;
    /** The columns read, by wire name, each with its header in the file. */
    columns: Record<string, string>;
  };
};

export type ImportPage = { items: ImportRow[]; pagination: PageInfo };
export type ImportRowPage = { items: StoredImportRow[]; pagination: PageInfo };

const STATUSES = ["pending", "importing", "complete", "failed"];
/** Row problems a preflight lists; the counts cover them all. */
const LISTED_ROW_ERRORS = 100;

type Staged = {
  importId: string;
  kind: ImportKind;
  config: ImportConfig;
  accountId: string | null;
  headers: string[];
  requiredHeaders: string[];
  missingRequiredHeaders: string[];
  columns: Record<string, string>;
  columnSeparator: string;
  formats: { dateFormat: DateFormat; numberFormat: NumberFormat; ambiguousDates: boolean } | null;
  rowsCount: number;
  invalidRowsCount: number;
  byteSize: number;
};

/**
 * File imports of transactions, as upstream's TransactionImport: a CSV file read as it arrives into
 * `import_rows` (each row with its problems), then published in one database transaction through the
 * transactions' write path. Preflight stages the file the same way inside a transaction it rolls back,
 * and counts the rows a publish would write with the publish's own duplicate test; it leaves nothing.
 */
export class ImportService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: ImportRepository,
    private readonly accounts: AccountRepository,
    private readonly transactions: TransactionService,
    private readonly trades: TradeService,
    private readonly accountWrites: AccountService,
    private readonly audit: AuditService,
    private readonly limits: CsvLimits,
  ) {}

  async preflight(actor: Actor, upload: ImportUpload): Promise<ImportPreflight> {
    const transaction = await this.sequelize.transaction();
    try {
      const staged = await this.stage(actor, upload, transaction);
      const errors: ImportProblem[] = [];
      if (staged.missingRequiredHeaders.length > 0)
        errors.push({ code: "missing_required_headers", message: `Missing required columns: ${staged.missingRequiredHeaders.join(", ")}` });
      else if (staged.rowsCount === 0) errors.push({ code: "no_data_rows", message: "No data rows were found." });
      if (staged.invalidRowsCount > 0)
        errors.push({
          code: "invalid_rows",
          message: `${staged.invalidRowsCount} of ${staged.rowsCount} rows have problems (see row_errors)`,
        });
      const plan = errors.length === 0 ? await this.plan(actor, staged, transaction) : null;
      const importable = plan?.importable ?? 0;
      const warnings: string[] = [];
      if (staged.formats?.ambiguousDates)
        warnings.push(`Dates read as ${staged.formats.dateFormat}; they also fit another format: set date_format if that is wrong.`);
      return {
        type: staged.kind,
        valid: errors.length === 0,
        content: {
          fileName: upload.fileName ?? "import.csv",
          contentType: upload.contentType ?? "text/csv",
          byteSize: staged.byteSize,
        },
        rowsCount: staged.rowsCount,
        validRowsCount: staged.rowsCount - staged.invalidRowsCount,
        invalidRowsCount: staged.invalidRowsCount,
        importableCount: importable,
        duplicateCount: plan ? plan.candidates - importable : 0,
        headers: staged.headers,
        requiredHeaders: staged.requiredHeaders,
        missingRequiredHeaders: staged.missingRequiredHeaders,
        errors,
        warnings,
        rowErrors: await this.repository.rowsWithProblems(staged.importId, LISTED_ROW_ERRORS, transaction),
        detected: {
          columnSeparator: staged.columnSeparator,
          dateFormat: staged.formats?.dateFormat ?? null,
          numberFormat: staged.formats?.numberFormat ?? null,
          columns: staged.columns,
        },
      };
    } finally {
      await transaction.rollback();
    }
  }

  /**
   * Stores the file as a pending import with its rows (`import.created`); with `publish`, also writes
   * its transactions in the same database transaction (`import.published`). A file that cannot be
   * published (a required column missing, no rows, a row with problems) is then refused whole: 422
   * with the problems, nothing stored.
   */
  async create(actor: Actor, upload: ImportUpload, publish: boolean): Promise<ImportRow> {
    const importId = await this.sequelize.transaction(async (transaction) => {
      const staged = await this.stage(actor, upload, transaction);
      if (staged.missingRequiredHeaders.length > 0)
        throw new ValidationError([`Missing required columns: ${staged.missingRequiredHeaders.join(", ")}`]);
      await this.audit.record(transaction, {
        type: "import.created",
        user: { id: actor.userId, email: actor.email },
        action: "create",
        resource: { type: "import", id: staged.importId, label: upload.fileName },
        changes: {
          rows_count: { old: null, new: staged.rowsCount },
          invalid_rows_count: { old: null, new: staged.invalidRowsCount },
        },
      });
      if (publish) await this.publishStaged(actor, staged.importId, staged.kind, transaction);
      return staged.importId;
    });
    return (await this.repository.byId(actor.familyId, importId))!;
  }

  /** Publishes a pending import (one transaction); refused while any row has problems, or once published. */
  async publish(actor: Actor, id: string): Promise<ImportRow> {
    await this.sequelize.transaction(async (transaction) => {
      const row = isUuid(id) ? await this.repository.byId(actor.familyId, id, transaction, true) : null;
      if (!row) throw new NotFoundError("Import");
      if (row.status !== "pending") throw new ValidationError([`The import is ${row.status}; only a pending import can be published`]);
      await this.repository.allowSortMemory(transaction);
      await this.publishStaged(actor, id, importKindOf(row.type) ?? "TransactionImport", transaction);
    });
    return (await this.repository.byId(actor.familyId, id))!;
  }

  async list(
    actor: Actor,
    filter: { status?: string | null; type?: string | null },
    page?: number | null,
    perPage?: number | null,
  ): Promise<ImportPage> {
    const status = filter.status?.trim() || null;
    if (status && !STATUSES.includes(status)) throw new ValidationError([`Status must be one of ${STATUSES.join(", ")}`]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.repository.page(
      actor.familyId,
      { status, type: filter.type?.trim() || null },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async get(actor: Actor, id: string): Promise<ImportRow> {
    const row = isUuid(id) ? await this.repository.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Import");
    return row;
  }

  async rows(actor: Actor, id: string, page?: number | null, perPage?: number | null): Promise<ImportRowPage> {
    const found = await this.get(actor, id);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.repository.rows(found.id, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  private async publishStaged(actor: Actor, importId: string, kind: ImportKind, transaction: Transaction): Promise<void> {
    const { rows, invalid } = await this.repository.countRows(importId, transaction);
    if (rows === 0) throw new ValidationError(["No data rows were found"]);
    if (invalid > 0) {
      const listed = await this.repository.rowsWithProblems(importId, 20, transaction);
      throw new ValidationError(listed.map((row) => `Row ${row.rowNumber}: ${row.problems.join("; ")}`));
    }
    const written =
      kind === "AccountImport"
        ? await this.publishAccounts(actor, importId, transaction)
        : kind === "TradeImport"
          ? await this.publishTrades(actor, importId, transaction)
          : await this.publishTransactions(actor, importId, transaction);
    const duplicates = written.candidates - written.inserted;
    await this.repository.finish(
      importId,
      { status: "complete", importedCount: written.inserted, duplicateCount: duplicates },
      transaction,
    );
    await this.audit.record(transaction, {
      type: "import.published",
      user: { id: actor.userId, email: actor.email },
      action: "publish",
      resource: { type: "import", id: importId },
      changes: { imported_count: { old: null, new: written.inserted }, duplicate_count: { old: null, new: duplicates } },
    });
  }

  /** Transactions through the transactions' write path (rules, ledger), set-based. */
  private async publishTransactions(actor: Actor, importId: string, transaction: Transaction) {
    const accountIds = await this.repository.publishAccountIds(importId, transaction);
    let candidates = 0;
    const inserted = await this.transactions.writeMany(
      actor.familyId,
      accountIds,
      async () => {
        const written = await this.repository.publish(importId, actor.familyId, transaction);
        candidates = written.candidates;
        return written;
      },
      transaction,
    );
    return { inserted, candidates };
  }

  /**
   * Trades through the trade service: the securities the rows name are found or created as POST
   * /trades finds them, the trades written set-based, then each account's holdings and ledger
   * recomputed from its first new trade (a sell beyond what is held refuses the whole publish).
   */
  private async publishTrades(actor: Actor, importId: string, transaction: Transaction) {
    await this.trades.ensureSecurities(await this.repository.unknownSecurities(importId, transaction), transaction);
    await this.repository.resolveSecurities(importId, transaction);
    const accountIds = await this.repository.publishAccountIds(importId, transaction);
    let candidates = 0;
    let inserted = 0;
    await this.trades.writeImported(
      actor.familyId,
      accountIds,
      async () => {
        const written = await this.repository.publishTrades(importId, actor.familyId, transaction);
        candidates = written.candidates;
        inserted = written.inserted;
        return written.accounts;
      },
      transaction,
    );
    return { inserted, candidates };
  }

  /**
   * Accounts through the accounts' write path (each opened at its balance, on its balance date when
   * the row has one, and audited): an account whose name the family has already (any case) is a
   * duplicate, counted, not created. One family's account imports run one at a time.
   */
  private async publishAccounts(actor: Actor, importId: string, transaction: Transaction) {
    await this.repository.lockFamilyAccountImports(actor.familyId, transaction);
    const rows = await this.repository.accountRows(importId, actor.familyId, transaction);
    let inserted = 0;
    for (const row of rows) {
      if (row.exists) continue;
      await this.accountWrites.createIn(
        actor,
        { name: row.name, accountType: row.accountType, currency: row.currency, balance: row.balance },
        transaction,
        row.date,
      );
      inserted += 1;
    }
    return { inserted, candidates: rows.length };
  }

  /** What a publish of the staged file would write now, with the publish's own duplicate test. */
  private async plan(actor: Actor, staged: Staged, transaction: Transaction): Promise<{ candidates: number; importable: number }> {
    if (staged.kind === "TradeImport") return this.repository.planTrades(staged.importId, transaction);
    if (staged.kind === "AccountImport") {
      const rows = await this.repository.accountRows(staged.importId, actor.familyId, transaction);
      return { candidates: rows.length, importable: rows.filter((row) => !row.exists).length };
    }
    return this.repository.plan(staged.importId, transaction);
  }

  /** The problems rows have together or with the family's data: accounts named, repeated names, sells beyond what is held. */
  private async checkRows(actor: Actor, staged: Staged, oneAccount: boolean, transaction: Transaction): Promise<void> {
    if (staged.kind === "AccountImport") return this.repository.markRepeatedNames(staged.importId, transaction);
    if (!oneAccount) await this.repository.resolveAccounts(staged.importId, actor.familyId, transaction);
    if (staged.kind === "TradeImport") {
      await this.repository.checkTradeAccounts(staged.importId, transaction);
      await this.repository.resolveSecurities(staged.importId, transaction);
      await this.repository.markOversells(staged.importId, transaction);
    }
  }

  /** Reads the upload into a new import's rows as it arrives, in the caller's transaction. */
  private async stage(actor: Actor, upload: ImportUpload, transaction: Transaction): Promise<Staged> {
    const kind = importKindOf(upload.settings.type);
    const { config, problems } = importConfigOf(upload.settings);
    if (!kind) problems.push(`type must be one of: ${IMPORT_TYPES.join(", ")}`);
    // An account import creates accounts: it goes to none.
    const accountId = kind === "AccountImport" ? null : upload.settings.accountId?.trim() || null;
    const account = accountId && isUuid(accountId) ? (await this.accounts.byIds(actor.familyId, [accountId], transaction))[0] : null;
    if (accountId && !account) problems.push("Account not found");
    if (problems.length > 0 || !kind) throw new ValidationError(problems);

    await this.repository.allowSortMemory(transaction);
    const file = await readCsv(upload.content, { columnSeparator: config.columnSeparator, rowsToSkip: config.rowsToSkip }, this.limits);
    const plan = columnPlan(file.headers, config, kind, accountId !== null);
    const importId = newId();
    await this.repository.insertImport(
      { id: importId, familyId: actor.familyId, accountId, type: kind, config, fileName: upload.fileName },
      transaction,
    );
    const staged: Staged = {
      importId,
      kind,
      config,
      accountId,
      headers: file.headers,
      requiredHeaders: plan.required,
      missingRequiredHeaders: plan.missing,
      columns: columnsRead(plan, file.headers),
      columnSeparator: file.columnSeparator,
      formats: null,
      rowsCount: 0,
      invalidRowsCount: 0,
      byteSize: 0,
    };
    if (plan.missing.length > 0) return { ...staged, byteSize: file.bytesRead() };

    const read = (record: string[]): StagedRow => {
      staged.rowsCount += 1;
      if (kind === "AccountImport" && staged.rowsCount > MAX_ACCOUNT_ROWS)
        throw new ValidationError([`An account import takes at most ${MAX_ACCOUNT_ROWS} rows (upstream's limit)`]);
      return stageRow(record, staged.rowsCount, plan, staged.formats!, config.signageConvention);
    };
    // The file's rows as they are read, into one COPY: the first DETECTION_SAMPLE held until the formats are known.
    async function* rows(): AsyncGenerator<StagedRow> {
      const sample: string[][] = [];
      for await (const record of file.records) {
        if (staged.formats) yield read(record);
        else {
          sample.push(record);
          if (sample.length >= DETECTION_SAMPLE) {
            staged.formats = resolvedFormats(config, plan, sample);
            for (const held of sample.splice(0)) yield read(held);
          }
        }
      }
      if (!staged.formats) {
        staged.formats = resolvedFormats(config, plan, sample);
        for (const held of sample.splice(0)) yield read(held);
      }
    }
    await this.repository.insertRows(importId, rows(), account ? { id: account.id, currency: account.currency } : null, transaction);
    await this.checkRows(actor, staged, account !== null, transaction);
    const counts = await this.repository.countRows(importId, transaction);
    staged.invalidRowsCount = counts.invalid;
    staged.byteSize = file.bytesRead();
    const formats = staged.formats!;
    // What was detected is stored, so the import shows how its file was read.
    const resolved: ImportConfig = {
      ...config,
      columnSeparator: file.columnSeparator,
      dateFormat: formats.dateFormat,
      numberFormat: formats.numberFormat,
    };
    await this.repository.finish(
      importId,
      { status: "pending", rowsCount: counts.rows, invalidRowsCount: counts.invalid, byteSize: staged.byteSize, config: resolved },
      transaction,
    );
    return staged;
  }
}
