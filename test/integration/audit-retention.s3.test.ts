/**
 * Archives in S3-compatible storage through the AWS SDK, against a real S3-compatible server on
 * loopback (s3rver: the S3 REST API, path-style, objects in a folder): a month is archived into the bucket, verified as
 * part of the chain, searched and restored from there; a deleted object is reported as missing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { readBackArchive } from "../../src/platform/files/archive-writer";
import { S3Store } from "../../src/audit/retention/archive-store";
import { checkpointSigner } from "../../src/audit/retention/checkpoint-key";
import { RetentionRepository } from "../../src/audit/retention/retention.repository";
import { RetentionService } from "../../src/audit/retention/retention.service";
import { startS3Server, type S3Server } from "../fakes/s3-server";
import { monthRows, seedMonth } from "../helpers/retention";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
let s3: S3Server;
let superuser: Client;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-retention-s3-"));
  s3 = await startS3Server();
  app = await startTestApp({ roles: { api: false, workers: false }, env: { DATA_DIR: dataDir, AUDIT_RETENTION_TIERS: "compliance" } });
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
});
afterAll(async () => {
  await superuser.end();
  await app.stop();
  await s3.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test("a month archived to an S3-compatible bucket verifies, searches and restores from it", async () => {
  const { sequelize, config, services } = app.runtime;
  const store = new S3Store({
    bucket: s3.bucket,
    prefix: "fg/",
    endpoint: s3.endpoint,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    forcePathStyle: true,
  });
  const retention = new RetentionService(
    sequelize,
    new RetentionRepository(sequelize),
    services.audit,
    services.repositories.audit,
    store,
    checkpointSigner(config.retention),
    config.retention,
  );
  await seedMonth(superuser, "2024-06", 10);
  await services.audit.chainCommitted();
  const before = await monthRows(superuser, "2024-06");
  const outcome = (await retention.run())!;
  expect(outcome.moved.find((month) => month.month === "2024-06")).toMatchObject({ rows: 10 });
  const [archive] = (await retention.archives()).filter((candidate) => candidate.manifest.month === "2024-06");
  expect(await store.exists(archive.storageKey)).toBe(true);
  expect(await store.exists(`${archive.storageKey}.manifest.json`)).toBe(true);
  expect(await retention.verify()).toMatchObject({ ok: true });

  const found = await retention.search([archive.id], { search: "person4@example.com" }, {});
  expect(found.events.map((event) => event.user?.email)).toEqual(["person4@example.com"]);
  await retention.restore("2024-06");
  expect(await monthRows(superuser, "2024-06")).toEqual(before);
  await retention.release("2024-06");

  // The bucket holds exactly the archive file the manifest describes.
  expect((await readBackArchive(await store.open(archive.storageKey))).fileSha256).toBe(archive.manifest.fileSha256);
  await store.remove(archive.storageKey);
  expect(await store.exists(archive.storageKey)).toBe(false);
  expect((await retention.verify()).firstBroken).toMatchObject({ kind: "deleted", message: expect.stringMatching(/missing/) });
});
