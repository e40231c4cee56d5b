/**
 * Checkpoints are C2SP signed notes. The oracle is the reference implementation's published example
 * (Go's golang.org/x/mod/sumdb/note): its key signs its text to exactly its signature (Ed25519 is
 * deterministic), and its note opens with its verifier key; any altered byte fails.
 */
import {
  checkpointText,
  generateSignerKey,
  openNote,
  parseCheckpointText,
  parseSignerKey,
  parseVerifierKey,
  signNote,
  verifierOf,
} from "../../src/audit/retention/signed-note";

const GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE = `${GO_TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

test("signs and opens exactly as the reference implementation", () => {
  const signer = parseSignerKey(GO_SIGNER);
  expect(signer.verifierKey).toBe(GO_VERIFIER);
  expect(signNote(GO_TEXT, signer)).toBe(GO_NOTE);
  expect(openNote(GO_NOTE, parseVerifierKey(GO_VERIFIER))).toBe(GO_TEXT);
  expect(() => openNote(GO_NOTE.replace("cryptography", "cryptographY"), parseVerifierKey(GO_VERIFIER))).toThrow(/does not verify/);
});

test("a generated key signs checkpoints that parse back, and only its own verify", () => {
  const signer = parseSignerKey(generateSignerKey("finance-gateway.test/audit"));
  const checkpoint = { origin: "finance-gateway.test/audit", treeSize: 1234n, rootHash: Buffer.alloc(32, 7) };
  const note = signNote(checkpointText(checkpoint), signer);
  expect(parseCheckpointText(openNote(note, verifierOf(signer)))).toEqual(checkpoint);
  const other = parseSignerKey(generateSignerKey("finance-gateway.test/audit"));
  expect(() => openNote(note, verifierOf(other))).toThrow();
  expect(() => openNote(note.replace("\n1234\n", "\n1235\n"), verifierOf(signer))).toThrow(/does not verify/);
});
