import type { ImportPreflight } from "./import.service";
import type { ImportRow, StoredImportRow } from "./import.repository";
import { tagNames, type Column } from "./import.rows";
import type { ImportPreflightType, ImportRowType, ImportType } from "./import.type";

/** An import as upstream's show view has it: status detail, configuration and stats. */
export function importView(row: ImportRow): ImportType {
  const valid = row.rowsCount - row.invalidRowsCount;
  const label = (column: Column) => row.config.labels[column] ?? null;
  return {
    ...row,
    statusDetail: {
      uploaded: true,
      configured: true,
      terminal: row.status === "complete" || row.status === "failed",
      cleaned: row.invalidRowsCount === 0,
      publishable: row.status === "pending" && row.rowsCount > 0 && row.invalidRowsCount === 0,
      revertable: false,
    },
    configuration: {
      dateColLabel: label("date"),
      amountColLabel: label("amount"),
      nameColLabel: label("name"),
      categoryColLabel: label("category"),
      tagsColLabel: label("tags"),
      notesColLabel: label("notes"),
      accountColLabel: label("account"),
      currencyColLabel: label("currency"),
      qtyColLabel: label("qty"),
      tickerColLabel: label("ticker"),
      priceColLabel: label("price"),
      entityTypeColLabel: label("entityType"),
      exchangeOperatingMicColLabel: label("exchangeOperatingMic"),
      merchantColLabel: label("merchant"),
      dateFormat: row.config.dateFormat,
      numberFormat: row.config.numberFormat,
      signageConvention: row.config.signageConvention,
    },
    stats: {
      rowsCount: row.rowsCount,
      validRowsCount: valid,
      invalidRowsCount: row.invalidRowsCount,
      mappingsCount: 0,
      unassignedMappingsCount: 0,
      importedCount: row.importedCount,
      duplicateCount: row.duplicateCount,
    },
  };
}

/** How upstream summarises a row's mapping; ours are matched (accounts) or created (categories, tags, merchants) by name at publish. */
function mapping(type: string, key: string, mappable: { id: string; type: string; name: string } | null, creatable: boolean) {
  return { key, type, value: mappable?.id ?? null, create_when_empty: creatable, creatable, mappable };
}

export function importRowView(importId: string, row: StoredImportRow): ImportRowType {
  const mappings: Record<string, unknown> = {
    tags: tagNames(row.tags).map((tag) => mapping("Import::TagMapping", tag, null, true)),
  };
  if (row.account)
    mappings.account = mapping(
      "Import::AccountMapping",
      row.account,
      row.accountId ? { id: row.accountId, type: "Account", name: row.account } : null,
      false,
    );
  if (row.category) mappings.category = mapping("Import::CategoryMapping", row.category, null, true);
  // Upstream maps no merchant in a transaction import; named as its other mappings are.
  if (row.merchant) mappings.merchant = mapping("Import::MerchantMapping", row.merchant, null, true);
  // An account import's type column is read by name (upstream maps it on a screen).
  if (row.entityType)
    mappings.account_type = { ...mapping("Import::AccountTypeMapping", row.entityType, null, false), value: row.accountType };
  return {
    id: `${importId}:${row.rowNumber}`,
    rowNumber: row.rowNumber,
    valid: row.problems.length === 0,
    errors: row.problems,
    fields: {
      account: row.account,
      date: row.date,
      amount: row.amount,
      currency: row.currency,
      name: row.name,
      category: row.category,
      tags: row.tags,
      notes: row.notes,
      merchant: row.merchant,
      ticker: row.ticker,
      exchangeOperatingMic: row.exchangeOperatingMic,
      qty: row.qty,
      price: row.price,
      entityType: row.entityType,
    },
    mappings,
    reading: {
      date: row.entryDate,
      amount: row.signedAmount,
      currency: row.currencyCode,
      accountId: row.accountId,
      transactionId: row.transactionId,
    },
  };
}

export function preflightView(report: ImportPreflight): ImportPreflightType {
  return {
    ...report,
    stats: {
      rowsCount: report.rowsCount,
      validRowsCount: report.validRowsCount,
      invalidRowsCount: report.invalidRowsCount,
      importableCount: report.importableCount,
      duplicateCount: report.duplicateCount,
    },
    detected: { colSep: report.detected.columnSeparator, ...report.detected },
  };
}
