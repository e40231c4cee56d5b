import fs from "node:fs";
import os from "node:os";
import path from "node:path";
// s3rver ships no types: an S3-compatible server (the S3 REST API, path-style; it does not
// check SigV4 signatures) that keeps objects in a folder.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (options: Record<string, unknown>) => {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
};

export type S3Server = { endpoint: string; bucket: string; directory: string; stop(): Promise<void> };

/** An S3-compatible server on loopback with one bucket; credentials are s3rver's fixed S3RVER/S3RVER. */
export async function startS3Server(bucket = "audit-archive"): Promise<S3Server> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "fg-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", directory, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    directory,
    async stop() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
