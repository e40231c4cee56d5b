import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";

/**
 * Where retention archives live: a folder (the default) or an S3-compatible bucket. Archives are
 * written to a local file first (the streamed, checksummed ArchiveWriter), then `put` under their key;
 * both stores make an object appear whole or not at all.
 */
export interface ArchiveStore {
  /** Stores the local `file` under `key` (the file is consumed). */
  put(key: string, file: string): Promise<void>;
  /** The stored bytes; an error when the object is missing. */
  open(key: string): Promise<Readable>;
  exists(key: string): Promise<boolean>;
  remove(key: string): Promise<void>;
  /** For messages: `dir:/path` or `s3://bucket/prefix`. */
  readonly where: string;
}

export type S3StoreOptions = {
  bucket: string;
  prefix: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
};

/** Keys are relative paths of our own making (`2026/01/audit-2026-01-extended.jsonl.gz`); nothing else is accepted. */
function checkKey(key: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(key) || key.includes("..")) throw new Error(`invalid archive key ${key}`);
  return key;
}

export class DirectoryStore implements ArchiveStore {
  constructor(private readonly root: string) {}

  get where(): string {
    return `dir:${this.root}`;
  }

  private pathOf(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  async put(key: string, file: string): Promise<void> {
    const target = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await fs.promises.rename(file, target);
  }

  async open(key: string): Promise<Readable> {
    const file = this.pathOf(key);
    await fs.promises.access(file);
    return fs.createReadStream(file);
  }

  async exists(key: string): Promise<boolean> {
    return fs.promises.access(this.pathOf(key)).then(
      () => true,
      () => false,
    );
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }
}

/**
 * An S3-compatible bucket through the AWS SDK. Checksums are sent only where the API requires them: the
 * SDK's default trailing CRC (aws-chunked uploads) is not understood by every S3-compatible server, and
 * the archive's own SHA-256 is checked on read-back anyway.
 */
export class S3Store implements ArchiveStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3StoreOptions) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
    });
  }

  get where(): string {
    return `s3://${this.options.bucket}/${this.options.prefix}`;
  }

  private keyOf(key: string): string {
    return `${this.options.prefix}${checkKey(key)}`;
  }

  async put(key: string, file: string): Promise<void> {
    const { size } = await fs.promises.stat(file);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(key), Body: fs.createReadStream(file), ContentLength: size }),
    );
    await fs.promises.rm(file, { force: true });
  }

  async open(key: string): Promise<Readable> {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(key) }));
    return answer.Body as Readable;
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(key) }));
      return true;
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) return false;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(key) }));
  }
}
