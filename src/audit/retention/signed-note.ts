import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";

/**
 * C2SP signed notes (the format of Go's sumdb and of transparency-log checkpoints), Ed25519 only. A
 * note is text lines, a blank line, then signature lines `— <key name> <base64(key id ‖ signature)>`;
 * the signature covers the text including its final newline. A key is named `name+keyid+base64(0x01 ‖
 * key)`, its id being the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key). A checkpoint is
 * a note whose text is the log's origin, its size and the base64 root hash, one per line. Pure.
 */

const ED25519 = 0x01;
const DASH = "\u2014";
/** DER prefixes that wrap a raw 32-byte Ed25519 seed / public key for node:crypto. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export type NoteSigner = { name: string; keyId: Buffer; privateKey: KeyObject; verifierKey: string };
export type NoteVerifier = { name: string; keyId: Buffer; publicKey: KeyObject };
export type Checkpoint = { origin: string; treeSize: bigint; rootHash: Buffer };

function keyIdOf(name: string, publicKey: Buffer): Buffer {
  return createHash("sha256")
    .update(Buffer.concat([Buffer.from(`${name}\n`, "utf8"), Buffer.from([ED25519]), publicKey]))
    .digest()
    .subarray(0, 4);
}

function checkName(name: string): void {
  if (!name || /[\s+]/.test(name) || !/^[\x21-\x7e]+$/.test(name))
    throw new Error("a note key name is printable ASCII without spaces or +");
}

function rawPublicKey(privateKey: KeyObject): Buffer {
  return createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(SPKI_PREFIX.length);
}

/** A signer from Go's private key text: `PRIVATE+KEY+<name>+<keyid>+<base64(0x01 ‖ seed)>`. */
export function parseSignerKey(text: string): NoteSigner {
  const parts = text.trim().split("+");
  if (parts.length < 5 || parts[0] !== "PRIVATE" || parts[1] !== "KEY") throw new Error("not a signed-note private key");
  const [name, id] = [parts[2], parts[3]];
  const key = Buffer.from(parts.slice(4).join("+"), "base64");
  checkName(name);
  if (key.length !== 33 || key[0] !== ED25519) throw new Error("not an Ed25519 signed-note private key");
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, key.subarray(1)]), format: "der", type: "pkcs8" });
  const publicKey = rawPublicKey(privateKey);
  const keyId = keyIdOf(name, publicKey);
  if (keyId.toString("hex") !== id.toLowerCase()) throw new Error("the private key's id does not match its key");
  return { name, keyId, privateKey, verifierKey: `${name}+${id}+${Buffer.concat([Buffer.from([ED25519]), publicKey]).toString("base64")}` };
}

/** A new key named `name`, as Go's private key text. */
export function generateSignerKey(name: string): string {
  checkName(name);
  const { privateKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(PKCS8_PREFIX.length);
  const id = keyIdOf(name, rawPublicKey(privateKey)).toString("hex");
  return `PRIVATE+KEY+${name}+${id}+${Buffer.concat([Buffer.from([ED25519]), seed]).toString("base64")}`;
}

/** A verifier from a public key text: `<name>+<keyid>+<base64(0x01 ‖ key)>`. */
export function parseVerifierKey(text: string): NoteVerifier {
  const parts = text.trim().split("+");
  if (parts.length < 3) throw new Error("not a signed-note verifier key");
  const [name, id] = [parts[0], parts[1]];
  const key = Buffer.from(parts.slice(2).join("+"), "base64");
  checkName(name);
  if (key.length !== 33 || key[0] !== ED25519) throw new Error("not an Ed25519 signed-note verifier key");
  const keyId = keyIdOf(name, key.subarray(1));
  if (keyId.toString("hex") !== id.toLowerCase()) throw new Error("the verifier key's id does not match its key");
  return { name, keyId, publicKey: createPublicKey({ key: Buffer.concat([SPKI_PREFIX, key.subarray(1)]), format: "der", type: "spki" }) };
}

export function verifierOf(signer: NoteSigner): NoteVerifier {
  return parseVerifierKey(signer.verifierKey);
}

/** Signs `text` (which must end with a newline and hold no blank line) as a note. */
export function signNote(text: string, signer: NoteSigner): string {
  if (!text.endsWith("\n") || text.includes("\n\n")) throw new Error("note text must end with a newline and have no blank line");
  const signature = sign(null, Buffer.from(text, "utf8"), signer.privateKey);
  return `${text}\n${DASH} ${signer.name} ${Buffer.concat([signer.keyId, signature]).toString("base64")}\n`;
}

/**
 * The text of a note if a signature line of `verifier` holds over it; otherwise an error saying why.
 * Signatures of other keys are ignored, as the format says.
 */
export function openNote(note: string, verifier: NoteVerifier): string {
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) throw new Error("malformed note: no blank line before its signatures");
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split("\n");
  let named = false;
  for (const line of lines) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!match) throw new Error("malformed note: a signature line is not `— <name> <base64>`");
    if (match[1] !== verifier.name) continue;
    const blob = Buffer.from(match[2], "base64");
    if (blob.length < 5 || !blob.subarray(0, 4).equals(verifier.keyId)) continue;
    named = true;
    if (verify(null, Buffer.from(text, "utf8"), verifier.publicKey, blob.subarray(4))) return text;
  }
  throw new Error(named ? "the note's signature does not verify" : `the note has no signature by ${verifier.name}`);
}

export function checkpointText(checkpoint: Checkpoint): string {
  return `${checkpoint.origin}\n${checkpoint.treeSize}\n${checkpoint.rootHash.toString("base64")}\n`;
}

export function parseCheckpointText(text: string): Checkpoint {
  const [origin, size, root] = text.split("\n");
  if (!origin || !/^\d+$/.test(size ?? "") || !root)
    throw new Error("malformed checkpoint: origin, tree size and root hash lines expected");
  const rootHash = Buffer.from(root, "base64");
  if (rootHash.length !== 32) throw new Error("malformed checkpoint: the root hash is not 32 bytes");
  return { origin, treeSize: BigInt(size), rootHash };
}
