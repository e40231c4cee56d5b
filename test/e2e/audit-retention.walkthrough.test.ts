/**
 * The acceptance walk, as docs/audit-retention.md tells it: with a short database window configured, a fresh
 * instance archives a month (the console's "Run retention now"), finds an event inside the archive,
 * restores the month (live search finds it again), and `audit verify --checkpoint FILE` reports an
 * intact chain across the archive and the database against the published checkpoint.
 */
import { eventually } from "../helpers/eventually";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { CLI } from "../helpers/cli";
import { signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { redisUrl } from "../helpers/database-urls";
import { seedMonth } from "../helpers/retention";

let rig: ConsoleRig;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-retention-e2e-"));
  rig = await startConsoleRig({
    DATA_DIR: dataDir,
    AUDIT_RETENTION_DATABASE_DAYS: "7",
    AUDIT_RETENTION_TIERS: "extended,auth.*=compliance",
    AUDIT_CHECKPOINT_FILE: path.join(dataDir, "published", "checkpoint"),
  });
  const superuser = new Client({ connectionString: rig.app.database.url });
  await superuser.connect();
  // Events of a month long past, as an instance that ran then holds them.
  await seedMonth(superuser, "2025-01", 8);
  await superuser.end();
}, 60_000);
afterAll(async () => {
  await rig?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test("archive a month, find an event in it, restore it, and verify the chain across both", async () => {
  const { context, page } = await rig.open();
  try {
    await page.goto("/admin/archives");
    await signIn(page, rig.admin.email);
    await page.getByRole("heading", { name: "Retention & archives" }).waitFor();
    await page.getByRole("button", { name: "Run retention now" }).click();
    await eventually(async () =>
      expect(await page.getByRole("list", { name: "Moved" }).textContent()).toContain("Moved 2025-01: 8 events"),
    );
    await page.getByLabel("Search archive 2025-01 compliance").check();
    await page.getByLabel("Archive search").fill("person2@example.com");
    await page.getByRole("button", { name: "Search archives" }).click();
    const found = page.getByRole("table", { name: "Archived events" });
    await eventually(async () => expect(await found.textContent()).toContain("person2@example.com"));
    expect(await found.locator("tbody tr").count()).toBe(1);

    await page.getByRole("button", { name: "Restore 2025-01" }).click();
    await page.getByText("2025-01 restored into the database.").waitFor();
  } finally {
    await context.close();
  }
  const live = await rig.app.runtime.services.audit.list({ search: "person2@example.com", from: "2025-01-01", to: "2025-01-31" }, {});
  expect(live.events).toHaveLength(1);

  const env = {
    ...process.env,
    DATABASE_URL: rig.app.database.url,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: rig.app.runtime.config.redisPrefix,
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
  };
  const checkpoint = path.join(dataDir, "published", "checkpoint");
  expect(fs.readFileSync(checkpoint, "utf8")).toMatch(
    /^finance-gateway\/audit\n\d+\n[A-Za-z0-9+/=]{44}\n\n\u2014 finance-gateway\/audit \S+\n$/,
  );
  const cli = spawnSync(process.execPath, [CLI, "audit", "verify", "--checkpoint", checkpoint, "--json"], { env, encoding: "utf8" });
  expect(cli.status).toBe(0);
  expect(JSON.parse(cli.stdout.trim())).toMatchObject({ ok: true, archives: 2, checkpoints: 2 });
});
