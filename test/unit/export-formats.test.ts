import { parse as parseCsv } from "csv-parse/sync";
import { csvField, csvRecord } from "../../src/audit/exports/export-formats";
import { DownloadSigner } from "../../src/audit/exports/signed-url";

describe("CSV fields (RFC 4180, spreadsheet formulas neutralised)", () => {
  test.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["crlf\r\nend", '"crlf\r\nend"'],
    ["=1+1", "'=1+1"],
    ["+41 22", "'+41 22"],
    ["-5", "'-5"],
    ["@handle", "'@handle"],
    ["\tindent", "'\tindent"],
    ['=HYPERLINK("x","y")', `"'=HYPERLINK(""x"",""y"")"`],
    ["naïve 日本", "naïve 日本"],
    ["a=b", "a=b"],
  ])("%j is written as %j", (value, written) => {
    expect(csvField(value)).toBe(written);
  });

  test("null is an empty field, and a record parses back with an independent parser", () => {
    expect(csvField(null)).toBe("");
    const values = ["x,y", 'q"q', "l1\nl2", null, "ü"];
    expect(parseCsv(csvRecord(values))).toEqual([["x,y", 'q"q', "l1\nl2", "", "ü"]]);
  });
});

describe("signed download URLs", () => {
  const signer = new DownloadSigner(Buffer.alloc(32, 7), 60);
  const now = Date.parse("2026-01-01T00:00:00Z");
  const { expires, signature } = signer.sign("file-1", "user-a", now);

  test("valid for the user and file it was signed for, until it expires", () => {
    expect(signer.check("file-1", "user-a", String(expires), signature, now + 59_000)).toBe("ok");
    expect(signer.check("file-1", "user-a", String(expires), signature, now + 60_000)).toBe("expired");
  });

  test("another user, another file, another key, a changed expiry or signature: invalid", () => {
    expect(signer.check("file-1", "user-b", String(expires), signature, now)).toBe("invalid");
    expect(signer.check("file-2", "user-a", String(expires), signature, now)).toBe("invalid");
    expect(new DownloadSigner(Buffer.alloc(32, 8), 60).check("file-1", "user-a", String(expires), signature, now)).toBe("invalid");
    expect(signer.check("file-1", "user-a", String(expires + 3600), signature, now)).toBe("invalid");
    expect(signer.check("file-1", "user-a", String(expires), signature.slice(0, -1) + "A", now)).not.toBe("ok");
    expect(signer.check("file-1", "user-a", undefined, signature, now)).toBe("invalid");
    expect(signer.check("file-1", "user-a", "1e9", signature, now)).toBe("invalid");
  });
});
