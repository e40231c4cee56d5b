import { createHash } from "node:crypto";
import { checkLink } from "../../src/audit/log/audit-chain-verify";
import type { VerifyRow } from "../../src/audit/log/audit.repository";

const hash = (text: string) => createHash("sha256").update(text).digest();

function link(seq: number, prev: Buffer | null, overrides: Partial<VerifyRow> = {}): VerifyRow {
  return {
    id: `event-${seq}`,
    seq: String(seq),
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
    prevHash: prev,
    hash: hash(`link-${seq}`),
    eventExists: true,
    hashMatches: true,
    ...overrides,
  };
}

describe("checking one link of the audit chain", () => {
  const first = link(1, null);
  const second = link(2, first.hash);

  test("an intact chain holds, from the genesis link on", () => {
    expect(checkLink(null, first, 1n)).toBeNull();
    expect(checkLink(first, second, 2n)).toBeNull();
  });

  test("a changed event is altered", () => {
    expect(checkLink(first, { ...second, hashMatches: false }, 2n)).toMatchObject({ kind: "altered", seq: "2", eventId: "event-2" });
  });

  test("a gap in the sequence is a deletion that names the first missing number", () => {
    const fifth = link(5, hash("link-4"));
    expect(checkLink(second, fifth, 5n)).toMatchObject({ kind: "deleted", seq: "3", message: expect.stringContaining("3 to 4") });
  });

  test("a link whose event is gone is a deletion", () => {
    expect(checkLink(first, { ...second, eventExists: false }, 2n)).toMatchObject({ kind: "deleted", seq: "2" });
  });

  test("a repeated sequence number is an insertion", () => {
    expect(checkLink(second, link(2, first.hash, { id: "intruder" }), 2n)).toMatchObject({ kind: "inserted", eventId: "intruder" });
  });

  test("a link that does not follow its predecessor's hash is relinked", () => {
    expect(checkLink(first, link(2, hash("something else")), 2n)).toMatchObject({ kind: "relinked", seq: "2" });
    expect(checkLink(null, link(1, hash("a predecessor that cannot exist")), 1n)).toMatchObject({ kind: "relinked" });
  });
});
