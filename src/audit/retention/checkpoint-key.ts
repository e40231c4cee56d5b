import fs from "node:fs";
import path from "node:path";
import type { RetentionConfig } from "../../platform/config/config";
import { generateSignerKey, parseSignerKey, type NoteSigner } from "./signed-note";

/**
 * The checkpoint signing key: AUDIT_CHECKPOINT_KEY, else the key file under DATA_DIR, created on first
 * use (exclusively, so two processes starting together agree on one key).
 */
export function checkpointSigner(config: RetentionConfig): () => Promise<NoteSigner> {
  let loaded: Promise<NoteSigner> | null = null;
  return () => (loaded ??= load(config));
}

async function load(config: RetentionConfig): Promise<NoteSigner> {
  if (config.checkpointKey) return parseSignerKey(config.checkpointKey);
  await fs.promises.mkdir(path.dirname(config.checkpointKeyFile), { recursive: true, mode: 0o700 });
  try {
    await fs.promises.writeFile(config.checkpointKeyFile, `${generateSignerKey(config.checkpointOrigin)}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return parseSignerKey(await fs.promises.readFile(config.checkpointKeyFile, "utf8"));
}
