import fs from "node:fs";
import { z } from "zod";
import { CLI_DOC, renderCliDoc } from "../../src/app/cli/cli-doc";
import { COMMANDS } from "../../src/app/cli/commands";
import { ConfigError, loadConfig } from "../../src/platform/config/config";
import { renderSettingsDoc, renderSettingsTables, setting, SETTINGS_DOC } from "../../src/platform/config/settings-doc";
import { settings } from "../../src/platform/config/settings";

/**
 * The settings and CLI references are generated from the code, and the drift test
 * (test/unit/contracts.drift.test.ts) compares the committed pages with a fresh rendering. These tests
 * plant what a contributor might add, and check that the drift test would catch each.
 */
const settingsPage = fs.readFileSync(SETTINGS_DOC, "utf8");
const cliPage = fs.readFileSync(CLI_DOC, "utf8");

test("a setting added without its meaning cannot be rendered: the page names it and where to document it", () => {
  const planted = settings.extend({ PLANTED_SETTING: z.coerce.number().int().min(1).default(7) });
  expect(() => renderSettingsDoc(settingsPage, planted)).toThrow(/setting PLANTED_SETTING has no documentation.*settings\.ts/);
});

test("a documented setting added without regenerating makes the committed page stale", () => {
  const planted = settings.extend({
    PLANTED_SETTING: setting(z.coerce.number().int().min(1).max(9).default(7), "Server", "A setting planted by this test."),
  });
  expect(renderSettingsDoc(settingsPage, settings)).toBe(settingsPage);
  const rendered = renderSettingsDoc(settingsPage, planted);
  expect(rendered).not.toBe(settingsPage);
  expect(rendered).toContain('| <a id="planted_setting"></a>`PLANTED_SETTING` | `7` | 1–9 | A setting planted by this test. |');
});

test("every setting the service reads has a row, with its default and accepted values from the schema", () => {
  const tables = renderSettingsTables(settings);
  for (const name of Object.keys(settings.shape).filter((key) => /^[A-Z]/.test(key))) expect(tables).toContain(`\`${name}\` |`);
  expect(tables).toContain('| <a id="database_pool_max"></a>`DATABASE_POOL_MAX` | `10` | 2–200 |');
  expect(tables).toContain("`LOG_FORMAT` | `auto` | `auto`, `json`, `pretty` |");
  expect(tables).toContain("`GRAPHQL_LANDING_PAGE` | `true` | `true` or `false` (also `1`/`0`, `yes`/`no`) |");
  // A default that depends on the machine is shown as the rule, never as this machine's path.
  expect(tables).toContain("`DATA_DIR` | `<project>/.data` |");
  expect(tables).not.toContain(process.cwd());
});

test("a command added without regenerating makes the CLI page stale", () => {
  expect(renderCliDoc(cliPage)).toBe(cliPage);
  const planted = [
    ...COMMANDS,
    { name: "planted", synopsis: "--now", summary: "a command planted by this test", options: {}, group: "Data" as const },
  ];
  const rendered = renderCliDoc(cliPage, planted);
  expect(rendered).not.toBe(cliPage);
  expect(rendered).toContain("### `planted`\n\n```\nUsage: finance-gateway planted --now [--json]");
});

test("the CLI page shows the retention command and the checkpoint option, from their help", () => {
  expect(cliPage).toContain("### `audit retention run`");
  expect(cliPage).toContain("audit verify [--from DATE] [--to DATE] [--checkpoint FILE]");
});

test("an invalid setting's boot error names the setting and the line of the settings page that describes it", () => {
  const error = (() => {
    try {
      loadConfig({ PORT: "99999", REDIS_URL: "http://x" });
    } catch (caught) {
      return caught as Error;
    }
    throw new Error("loadConfig accepted an invalid configuration");
  })();
  expect(error).toBeInstanceOf(ConfigError);
  expect(error.message).toContain("PORT: Too big: expected number to be <=65535 (see docs/settings.md#port)");
  expect(error.message).toContain("REDIS_URL: must be a redis:// or rediss:// URL (see docs/settings.md#redis_url)");
  // The anchors the errors point at exist on the page.
  expect(settingsPage).toContain('<a id="port"></a>');
  expect(settingsPage).toContain('<a id="redis_url"></a>');
});
