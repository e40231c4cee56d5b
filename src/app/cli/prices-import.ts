import fs from "node:fs";
import { ValidationError } from "../../platform/common/errors";
import { readCsv, type CsvLimits } from "../../finance/imports/csv.reader";
import type { PriceEntry } from "../../finance/investments";
import type { Services } from "../services";

/** The columns of a prices file, in any order; others are refused (a misspelt column would be lost silently). */
export const PRICE_COLUMNS = ["ticker", "date", "price", "currency"] as const;

/**
 * `finance-gateway prices import FILE`: a CSV of ticker,date,price,currency with a header, read as a
 * file upload is (UTF-8, any separator, quoting, IMPORT_MAX_BYTES and IMPORT_MAX_ROWS), then recorded
 * all or nothing as the API records prices, audited with no user (the CLI's requests carry
 * `finance-gateway-cli`). A problem names its data row (1 is the row under the header) and column.
 */
export async function importPrices(services: Services, file: string, limits: CsvLimits) {
  const stat = await fs.promises.stat(file).catch((error: NodeJS.ErrnoException) => {
    throw new Error(error.code === "ENOENT" ? `${file}: no such file` : `${file}: ${error.message}`, { cause: error });
  });
  if (!stat.isFile()) throw new Error(`${file} is not a file`);
  const csv = await readCsv(fs.createReadStream(file), {}, limits);
  const headers = csv.headers.map((header) => header.toLowerCase());
  const missing = PRICE_COLUMNS.filter((column) => !headers.includes(column));
  const unknown = headers.filter((header) => !(PRICE_COLUMNS as readonly string[]).includes(header));
  if (missing.length > 0 || unknown.length > 0) {
    throw new ValidationError([
      `The header must name the columns ${PRICE_COLUMNS.join(",")}` +
        (missing.length ? `; missing: ${missing.join(", ")}` : "") +
        (unknown.length ? `; unknown: ${unknown.join(", ")}` : ""),
    ]);
  }
  const at = (record: string[], column: (typeof PRICE_COLUMNS)[number]) => record[headers.indexOf(column)] ?? "";
  const entries: PriceEntry[] = [];
  for await (const record of csv.records)
    entries.push({ ticker: at(record, "ticker"), date: at(record, "date"), price: at(record, "price"), currency: at(record, "currency") });
  return services.securityPrices.recordFromFile(file, entries);
}
