import { readCsv, MAX_COLUMNS } from "../../src/finance/imports/csv.reader";
import { detectDateFormat, detectNumberFormat, parseDate, parseNumber, storedAmount } from "../../src/finance/imports/import.formats";

/** The file as an upload arrives: in small chunks, split anywhere (inside a character too). */
async function* chunked(content: string | Buffer, size = 7): AsyncGenerator<Buffer> {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function readAll(content: string | Buffer, options = {}, limits = { maxBytes: 1_000_000, maxRows: 1000 }) {
  const file = await readCsv(chunked(content), options, limits);
  const rows: string[][] = [];
  for await (const record of file.records) rows.push(record);
  return { separator: file.columnSeparator, headers: file.headers, rows, bytes: file.bytesRead() };
}

async function refusal(content: string | Buffer, limits = { maxBytes: 1_000_000, maxRows: 1000 }) {
  try {
    await readAll(content, {}, limits);
  } catch (error) {
    const { code, errors, message } = error as { code: string; errors?: string[]; message: string };
    return { code, problem: errors?.[0] ?? message };
  }
  throw new Error("the file was accepted");
}

describe("reading a CSV file as it arrives", () => {
  test("a BOM, mixed line endings, quoted separators and newlines, a semicolon file, and characters split across chunks", async () => {
    const file =
      '\ufeffDate;Payee;Amount\r\n2026-01-02;"Café; ""Le Nord""";-4,50\n2026-01-03;"two\nlines";1.234,56\r2026-01-04;Ünïcode ✓;7\n\n';
    expect(await readAll(file)).toEqual({
      separator: ";",
      headers: ["Date", "Payee", "Amount"],
      rows: [
        ["2026-01-02", 'Café; "Le Nord"', "-4,50"],
        ["2026-01-03", "two\nlines", "1.234,56"],
        ["2026-01-04", "Ünïcode ✓", "7"],
      ],
      bytes: Buffer.byteLength(file),
    });
  });

  test("rows to skip come before the header", async () => {
    const read = await readAll("Bank export\nAccount 123\ndate,amount\n2026-01-01,5\n", { rowsToSkip: 2 });
    expect(read.headers).toEqual(["date", "amount"]);
    expect(read.rows).toEqual([["2026-01-01", "5"]]);
  });

  test("hostile files are refused with the reason, never half read", async () => {
    expect(await refusal(Buffer.concat([Buffer.from("date,name\n2026-01-01,"), Buffer.from([0xc3, 0x28]), Buffer.from("\n")]))).toEqual({
      code: "VALIDATION_FAILED",
      problem: expect.stringContaining("not valid UTF-8"),
    });
    expect(await refusal("date,amount\n" + "2026-01-01,1\n".repeat(20), { maxBytes: 100, maxRows: 1000 })).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      problem: "The file is larger than IMPORT_MAX_BYTES (100 bytes)",
    });
    expect(await refusal("date,amount\n" + "2026-01-01,1\n".repeat(11), { maxBytes: 10_000, maxRows: 10 })).toEqual({
      code: "VALIDATION_FAILED",
      problem: "The file has more than IMPORT_MAX_ROWS (10) data rows",
    });
    const wide = Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(",");
    expect(await refusal(`${wide}\n`)).toEqual({
      code: "VALIDATION_FAILED",
      problem: `The file has 10000 columns; an import takes at most ${MAX_COLUMNS}`,
    });
    expect(await refusal(`date,name\n2026-01-01,${"x".repeat(1024 * 1024)}\n`, { maxBytes: 2_000_000, maxRows: 10 })).toEqual({
      code: "VALIDATION_FAILED",
      problem: expect.stringContaining("longer than 65536 characters"),
    });
    expect(await refusal('date,name\n2026-01-01,"never closed\n')).toEqual({
      code: "VALIDATION_FAILED",
      problem: expect.stringContaining("quoted field is never closed"),
    });
    expect(await refusal("")).toEqual({ code: "VALIDATION_FAILED", problem: "The file has no header row" });
  });
});

describe("dates and numbers as files write them", () => {
  test.each([
    ["2026-03-04", "%Y-%m-%d", "2026-03-04"],
    ["03/04/2026", "%m/%d/%Y", "2026-03-04"],
    ["04/03/2026", "%d/%m/%Y", "2026-03-04"],
    ["4.3.2026", "%d.%m.%Y", "2026-03-04"],
    ["20260304", "%Y%m%d", "2026-03-04"],
    ["04/03/26", "%d/%m/%y", "2026-03-04"],
    ["2026-02-30", "%Y-%m-%d", null],
    ["1969-12-31", "%Y-%m-%d", null],
    ["13/01/2026", "%m/%d/%Y", null],
  ] as const)("%s read as %s is %s", (value, format, iso) => {
    expect(parseDate(value, format)).toBe(iso);
  });

  test("the date format is detected from the samples; days over 12 settle US against European", () => {
    expect(detectDateFormat(["2026-01-02", "2026-12-31"])).toEqual({ format: "%Y-%m-%d", ambiguous: false });
    expect(detectDateFormat(["01/02/2026", "12/31/2026"])).toEqual({ format: "%m/%d/%Y", ambiguous: false });
    expect(detectDateFormat(["31/12/2026", "01/02/2026"])).toEqual({ format: "%d/%m/%Y", ambiguous: false });
    expect(detectDateFormat(["01/02/2026"])).toEqual({ format: "%m/%d/%Y", ambiguous: true });
  });

  test.each([
    ["1,234.56", "1,234.56", "1234.56"],
    ["$-4.50", "1,234.56", "-4.5"],
    ["(12.00)", "1,234.56", "-12"],
    ["12.00-", "1,234.56", "-12"],
    ["1.234,56", "1.234,56", "1234.56"],
    ["-4,5 €", "1.234,56", "-4.5"],
    ["1 234,56", "1 234,56", "1234.56"],
    ["1,234", "1,234", "1234"],
  ] as const)("%s in %s is %s", (value, format, amount) => {
    expect(parseNumber(value, format)).toEqual({ ok: true, amount });
  });

  test("what is not a number in the format is said so", () => {
    expect(parseNumber("abc", "1,234.56")).toEqual({ ok: false, reason: "must be a number" });
    expect(parseNumber("1.234,56", "1,234")).toEqual({ ok: false, reason: "is not a whole number in the 1,234 format" });
    expect(parseNumber("1e400", "1,234.56").ok).toBe(false);
  });

  test("a decimal comma is detected; the sign convention decides what positive means", () => {
    expect(detectNumberFormat(["-4,50", "1.234,56"])).toBe("1.234,56");
    expect(detectNumberFormat(["-4.50", "1,234.56"])).toBe("1,234.56");
    expect(storedAmount("-4.5", "inflows_positive")).toBe("4.5");
    expect(storedAmount("-4.5", "inflows_negative")).toBe("-4.5");
  });
});
